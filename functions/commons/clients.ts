import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { numberFromEnv } from './config.ts';

/**
 * One DynamoDB client per execution environment, shared by every data-access module.
 * `DYNAMODB_ENDPOINT` points it at DynamoDB Local (or any other endpoint).
 *
 * Timeouts are short and retries bounded so that a struggling database turns into a quick 503
 * with Retry-After instead of a request that hangs until the Lambda timeout.
 */
const endpoint = process.env.DYNAMODB_ENDPOINT;

export const dynamodb = new DynamoDBClient({
  maxAttempts: numberFromEnv('DYNAMODB_MAX_ATTEMPTS', 3),
  requestHandler: {
    connectionTimeout: numberFromEnv('DYNAMODB_CONNECT_TIMEOUT_MS', 1000),
    requestTimeout: numberFromEnv('DYNAMODB_REQUEST_TIMEOUT_MS', 3000),
  },
  ...(endpoint
    ? {
        endpoint,
        region: process.env.AWS_REGION ?? 'local',
        // DynamoDB Local accepts any credentials; real AWS never takes this branch.
        ...(process.env.AWS_ACCESS_KEY_ID
          ? {}
          : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
      }
    : {}),
});

export const documents = DynamoDBDocumentClient.from(dynamodb, {
  marshallOptions: { removeUndefinedValues: true },
});
