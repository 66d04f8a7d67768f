import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { numberFromEnv, tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('idempotencyKeys');

/** How long a key is remembered; a repeat after that creates anew. */
const KEY_LIFETIME_SECONDS = Math.round(numberFromEnv('IDEMPOTENCY_KEY_HOURS', 24) * 3600);

/** The first response to a request sent with an Idempotency-Key, kept to answer its repeats. */
export interface StoredResponse {
  /** `account#operation#key`: a key is scoped to its account and its route. */
  idempotency_key: string;
  /** SHA-256 of the normalised request, to tell a repeat from a different request. */
  request_hash: string;
  status_code: number;
  /** The response body as sent: a JSON string, since DynamoDB maps do not keep key order. */
  body: string;
  location?: string;
  created_at: string;
  expires_at: number;
}

const storageKey = (accountId: number, operationId: string, key: string) => `${accountId}#${operationId}#${key}`;
const epochSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

export function newStoredResponse(
  scope: { accountId: number; operationId: string; key: string },
  requestHash: string,
  response: { statusCode: number; body: string; location?: string },
  now: Date,
): StoredResponse {
  return {
    idempotency_key: storageKey(scope.accountId, scope.operationId, scope.key),
    request_hash: requestHash,
    status_code: response.statusCode,
    body: response.body,
    ...(response.location ? { location: response.location } : {}),
    created_at: now.toISOString(),
    expires_at: epochSeconds(now) + KEY_LIFETIME_SECONDS,
  };
}

/** A consistent read of a live stored response: used only where a lost race would waste much work. */
export async function findStoredResponse(scope: { accountId: number; operationId: string; key: string }, now: Date) {
  const { Item } = await documents.send(
    new GetCommand({
      TableName: TABLE,
      Key: { idempotency_key: storageKey(scope.accountId, scope.operationId, scope.key) },
      ConsistentRead: true,
    }),
  );
  const stored = Item as StoredResponse | undefined;
  return stored && stored.expires_at > epochSeconds(now) ? stored : undefined;
}

/**
 * Joins the transaction that creates what the key protects. Its condition fails when a live
 * response is stored under the key, which comes back with the failure: a repeat costs no read.
 * An expired key may still be in the table until TTL removes it: it is overwritten then.
 */
export function putStoredResponse(stored: StoredResponse): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: stored,
      ConditionExpression: 'attribute_not_exists(idempotency_key) OR expires_at <= :now',
      ExpressionAttributeValues: { ':now': stored.expires_at - KEY_LIFETIME_SECONDS },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
