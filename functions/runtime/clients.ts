import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { numberFromEnv } from './config.ts';
import { DeadlineExceededError, deadlineSignal } from './deadline.ts';

/**
 * One DynamoDB client per execution environment, shared by every data-access module.
 * `DYNAMODB_ENDPOINT` points it at DynamoDB Local (or any other endpoint).
 *
 * A struggling or hung database must turn into a quick 503 with Retry-After, never a request
 * that waits for the Lambda timeout:
 * - each attempt has a connection timeout and a request timeout, and the request timeout
 *   *throws* (`throwOnRequestTimeout`; without it the SDK only logs a warning and waits on);
 * - attempts are bounded (DYNAMODB_MAX_ATTEMPTS, with the SDK's back-off in between);
 * - the whole call, attempts and back-off together, ends at the invocation's deadline
 *   (deadline.ts): every `send` gets the invocation's deadline signal as its `abortSignal`.
 */
const endpoint = process.env.DYNAMODB_ENDPOINT;

/** Per attempt: DynamoDB answers in milliseconds; 2 s leaves room for a slow moment, not a hang. */
export const REQUEST_TIMEOUT_MS = numberFromEnv('DYNAMODB_REQUEST_TIMEOUT_MS', 2000);
export const MAX_ATTEMPTS = numberFromEnv('DYNAMODB_MAX_ATTEMPTS', 3);

export const dynamodb = new DynamoDBClient({
  maxAttempts: MAX_ATTEMPTS,
  requestHandler: {
    connectionTimeout: numberFromEnv('DYNAMODB_CONNECT_TIMEOUT_MS', 1000),
    requestTimeout: REQUEST_TIMEOUT_MS,
    throwOnRequestTimeout: true,
  },
  ...(endpoint
    ? {
        endpoint,
        region: process.env.AWS_REGION ?? 'local',
        // DynamoDB Local accepts any credentials; real AWS never takes this branch.
        ...(process.env.AWS_ACCESS_KEY_ID ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
      }
    : {}),
});

export const documents = DynamoDBDocumentClient.from(dynamodb, {
  marshallOptions: { removeUndefinedValues: true },
});

boundByDeadline(dynamodb);
boundByDeadline(documents);

/**
 * Gives every call of `client` the running invocation's deadline signal (unless the caller
 * passed a signal of its own). When the deadline aborts a call, the SDK's AbortError becomes a
 * DeadlineExceededError, so the caller answers 503 rather than 500.
 */
function boundByDeadline(client: { send: (...args: any[]) => Promise<any> }): void {
  const send = client.send.bind(client) as (command: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;
  client.send = async (command: unknown, options?: { abortSignal?: AbortSignal }) => {
    const abortSignal = options?.abortSignal ?? deadlineSignal();
    if (!abortSignal) return send(command, options);
    try {
      return await send(command, { ...options, abortSignal });
    } catch (error) {
      if (abortSignal.aborted && abortSignal.reason instanceof DeadlineExceededError) {
        throw new DeadlineExceededError(abortSignal.reason.message, { cause: error });
      }
      throw error;
    }
  };
}
