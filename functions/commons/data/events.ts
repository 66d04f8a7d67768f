import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../clients.ts';
import { numberFromEnv, tableName } from '../config.ts';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('events');

/** How long an event stays readable; DynamoDB's TTL removes it some time after that. */
const RETENTION_SECONDS = Math.round(numberFromEnv('EVENT_RETENTION_DAYS', 30) * 86_400);

export type EventType = 'code_generator.created' | 'transaction.voided';

export interface EventRecord {
  id: number;
  account_id: number;
  type: EventType;
  resource_id: string;
  created_at: string;
  /** Epoch seconds; the table's TTL attribute. */
  expires_at: number;
}

export function newEvent(id: number, accountId: number, type: EventType, resourceId: string, now: Date): EventRecord {
  return {
    id,
    account_id: accountId,
    type,
    resource_id: resourceId,
    created_at: now.toISOString(),
    expires_at: Math.floor(now.getTime() / 1000) + RETENTION_SECONDS,
  };
}

export function putEvent(event: EventRecord): TransactItem {
  return { Put: { TableName: TABLE, Item: event, ConditionExpression: 'attribute_not_exists(id)' } };
}

const epochSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

/** The account's event, or undefined when absent, another account's, or expired. */
export async function findEvent(accountId: number, id: number, now: Date): Promise<EventRecord | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { id }, ConsistentRead: true }));
  const event = Item as EventRecord | undefined;
  if (!event || event.account_id !== accountId || event.expires_at <= epochSeconds(now)) return undefined;
  return event;
}

/**
 * Deletes the account's live event in one conditional request; returns false when there was
 * nothing of this account's to delete (absent, another account's, expired, or already deleted).
 */
export async function deleteEvent(accountId: number, id: number, now: Date): Promise<boolean> {
  try {
    await documents.send(
      new DeleteCommand({
        TableName: TABLE,
        Key: { id },
        ConditionExpression: 'account_id = :account AND expires_at > :now',
        ExpressionAttributeValues: { ':account': accountId, ':now': epochSeconds(now) },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}
