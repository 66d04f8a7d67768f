import type { TestProject } from 'vitest/node';
import { ensureTables, freePort, startDynamoDbLocal, tableEnvironment, tableNamesWithPrefix } from '../../local/dynamodb.ts';

/**
 * One in-memory DynamoDB Local for the whole run, on a free port, with the tables of
 * functions/tables.ts. Test files isolate themselves by creating their own accounts.
 * The environment set here is inherited by the test workers, which start after this.
 */
export default async function setup(project: TestProject) {
  const port = await freePort();
  const dynamodb = await startDynamoDbLocal({ port });
  const names = tableNamesWithPrefix('test-');
  await ensureTables(dynamodb.endpoint, names);
  const environment = { ...tableEnvironment(names), DYNAMODB_ENDPOINT: dynamodb.endpoint, DYNAMODB_LOCAL_PORT: String(port) };
  Object.assign(process.env, environment);
  project.provide('dynamodbEndpoint', dynamodb.endpoint);
  return async () => {
    await dynamodb.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}
