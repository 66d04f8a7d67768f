import type { TestProject } from 'vitest/node';
import { randomSecrets } from '../../local/secrets.ts';
import { startLocalStack } from '../../local/stack.ts';
import { TEST_CURSOR_KEY, TEST_CUSTOMER_KEY } from './customer-key.ts';

/**
 * One in-memory DynamoDB Local for the whole run, on a free port, with the tables of
 * functions/tables.ts, and the fixed test customer key. Test files isolate themselves by creating
 * their own accounts. The webhook secrets key is fresh each run (its database is too).
 * The environment set here is inherited by the test workers, which start after this.
 */
export default async function setup(project: TestProject) {
  // No servers here: each test file starts its own (test/support/local-api.ts) on this database.
  const stack = await startLocalStack({
    tablePrefix: 'test-',
    api: false,
    secrets: { ...randomSecrets(), customerKey: TEST_CUSTOMER_KEY, cursorKey: TEST_CURSOR_KEY },
  });
  process.env.DYNAMODB_LOCAL_PORT = String(stack.dynamodbPort);
  project.provide('dynamodbEndpoint', stack.dynamodbEndpoint);
  return () => stack.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}
