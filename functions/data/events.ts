import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { numberFromEnv, tableName } from '#runtime/config';
import type { EventType } from './event-types.ts';
import type { TransactItem } from './transactions.ts';

export type { EventType };

const TABLE = tableName('events');

/** How long an event stays readable; DynamoDB's TTL removes it some time after that. */
const RETENTION_SECONDS = Math.round(numberFromEnv('EVENT_RETENTION_DAYS', 30) * 86_400);

export interface EventRecord {
  account_id: number;
  id: number;
  type: EventType;
  resource_id: string;
  created_at: string;
  /** Epoch seconds; the table's TTL attribute. */
  expires_at: number;
}

const epochSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

export function newEvent(id: number, accountId: number, type: EventType, resourceId: string, now: Date): EventRecord {
  return {
    account_id: accountId,
    id,
    type,
    resource_id: resourceId,
    created_at: now.toISOString(),
    expires_at: epochSeconds(now) + RETENTION_SECONDS,
  };
}

/** Fails its condition only if the fresh id is taken: the id counter is behind the table. */
export function putEvent(event: EventRecord): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: event,
      ConditionExpression: 'attribute_not_exists(id)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** The account's live event, or undefined when absent, acknowledged or expired. */
export async function findEvent(accountId: number, id: number, now: Date): Promise<EventRecord | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { account_id: accountId, id }, ConsistentRead: true }));
  const event = Item as EventRecord | undefined;
  return event && event.expires_at > epochSeconds(now) ? event : undefined;
}

/**
 * Deletes (acknowledges) the account's live event in one conditional request; false when there
 * was nothing to delete (absent, expired, or already acknowledged).
 */
export async function deleteEvent(accountId: number, id: number, now: Date): Promise<boolean> {
  try {
    await documents.send(
      new DeleteCommand({
        TableName: TABLE,
        Key: { account_id: accountId, id },
        ConditionExpression: 'attribute_exists(id) AND expires_at > :now',
        ExpressionAttributeValues: { ':now': epochSeconds(now) },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/**
 * One page of the account's live events in ascending id order after `afterId`: one Query of
 * `limit + 1` items (the extra one says whether a next page exists). Expired events that TTL
 * has not yet removed are filtered out; only when they shorten the page is a further Query made.
 */
export async function listEvents(accountId: number, afterId: number, limit: number, now: Date) {
  const events: EventRecord[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'account_id = :account AND id > :after',
        FilterExpression: 'expires_at > :now',
        ExpressionAttributeValues: { ':account': accountId, ':after': afterId, ':now': epochSeconds(now) },
        ConsistentRead: true,
        Limit: limit + 1 - events.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    events.push(...((page.Items ?? []) as EventRecord[]));
    start = page.LastEvaluatedKey;
  } while (start && events.length <= limit);
  return { items: events.slice(0, limit), more: events.length > limit };
}
