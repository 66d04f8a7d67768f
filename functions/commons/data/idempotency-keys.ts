import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../clients.ts';
import { numberFromEnv, tableName } from '../config.ts';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('idempotencyKeys');

/** How long a key is remembered; a repeat after that creates anew. */
const KEY_LIFETIME_SECONDS = Math.round(numberFromEnv('IDEMPOTENCY_KEY_HOURS', 24) * 3600);

/** The first response to a request sent with an Idempotency-Key, kept to answer its repeats. */
export interface StoredResponse {
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

const storageKey = (accountId: number, key: string) => `${accountId}#${key}`;

export function newStoredResponse(
  accountId: number,
  key: string,
  requestHash: string,
  response: { statusCode: number; body: string; location?: string },
  now: Date,
): StoredResponse {
  return {
    idempotency_key: storageKey(accountId, key),
    request_hash: requestHash,
    status_code: response.statusCode,
    body: response.body,
    location: response.location,
    created_at: now.toISOString(),
    expires_at: Math.floor(now.getTime() / 1000) + KEY_LIFETIME_SECONDS,
  };
}

export async function findStoredResponse(accountId: number, key: string, now: Date): Promise<StoredResponse | undefined> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: TABLE, Key: { idempotency_key: storageKey(accountId, key) }, ConsistentRead: true }),
  );
  const stored = Item as StoredResponse | undefined;
  return stored && stored.expires_at > Math.floor(now.getTime() / 1000) ? stored : undefined;
}

/** An expired key may still be in the table until TTL removes it: it is overwritten then. */
export function putStoredResponse(stored: StoredResponse): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: stored,
      ConditionExpression: 'attribute_not_exists(idempotency_key) OR expires_at <= :now',
      ExpressionAttributeValues: { ':now': stored.expires_at - KEY_LIFETIME_SECONDS },
    },
  };
}
