import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

/**
 * Signing secrets live in their own table: the routes that create, rotate and delete them may
 * only write it (PutItem, UpdateItem, DeleteItem in their route rows: no read action granted),
 * and only the sender may read it (GetItem, functions/workers.ts). No endpoint read, list or log line can carry what it never loaded.
 */
const TABLE = tableName('webhookSecrets');

/** How long the replaced secret keeps signing after a rotation. */
const PREVIOUS_SECRET_SECONDS = 24 * 3600;

const endpointKey = (accountId: number, endpointId: number) => `${accountId}#${endpointId}`;

export function putSecret(accountId: number, endpointId: number, secret: string): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: { endpoint_key: endpointKey(accountId, endpointId), secret },
      ConditionExpression: 'attribute_not_exists(endpoint_key)',
    },
  };
}

/** The current secret becomes the previous one (for 24 hours); the one before it is dropped. */
export function rotateSecret(accountId: number, endpointId: number, secret: string, now: Date): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { endpoint_key: endpointKey(accountId, endpointId) },
      UpdateExpression: 'SET previous_secret = secret, previous_until = :until, secret = :secret',
      ConditionExpression: 'attribute_exists(endpoint_key)',
      ExpressionAttributeValues: { ':secret': secret, ':until': Math.floor(now.getTime() / 1000) + PREVIOUS_SECRET_SECONDS },
    },
  };
}

export function deleteSecret(accountId: number, endpointId: number): TransactItem {
  return { Delete: { TableName: TABLE, Key: { endpoint_key: endpointKey(accountId, endpointId) } } };
}

/** The secrets that sign a delivery now: the current one, and the previous one within 24 h of a rotation. */
export async function signingSecrets(accountId: number, endpointId: number, now: Date): Promise<string[] | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { endpoint_key: endpointKey(accountId, endpointId) }, ConsistentRead: true }));
  if (!Item) return undefined;
  const previousValid = Item.previous_secret && Item.previous_until > Math.floor(now.getTime() / 1000);
  return previousValid ? [Item.secret as string, Item.previous_secret as string] : [Item.secret as string];
}
