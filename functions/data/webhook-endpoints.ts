import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('webhookEndpoints');

/** PRODUCT.md: at most 10 endpoints per account, also under concurrent creates. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 10;

/**
 * The item with id 0 of each account counts its endpoints. Every create adds one under the
 * condition that the count is below the maximum, every delete takes one away, each in the same
 * transaction as the endpoint itself: two concurrent creates conflict on this item, so the limit
 * holds however many arrive at once. Lists start after id 0, so it is never listed.
 */
const COUNT_ID = 0;

type EndpointStatus = 'enabled' | 'disabled';

export interface WebhookEndpoint {
  account_id: number;
  id: number;
  url: string;
  /** Event types, or `["*"]`: every type, those added later included. */
  event_types: string[];
  description: string;
  status: EndpointStatus;
  created_at: string;
  updated_at: string;
  /** When the endpoint was last enabled: events created before it are not sent to it. */
  enabled_at: string;
  /** The first failed attempt since the last success; five days of it disables the endpoint. */
  failing_since?: string;
  /**
   * The lanes its origin has earned (functions/webhooks/lanes.ts; absent: INITIAL_LANES) and when they last
   * changed (epoch milliseconds): written by the sender only when they change.
   */
  lanes?: number;
  lanes_at?: number;
}

export function putEndpoint(endpoint: WebhookEndpoint): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: endpoint,
      ConditionExpression: 'attribute_not_exists(id)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** Fails its condition when the account already has the maximum. */
export function countOneMore(accountId: number): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { account_id: accountId, id: COUNT_ID },
      UpdateExpression: 'ADD endpoint_count :one',
      ConditionExpression: 'attribute_not_exists(endpoint_count) OR endpoint_count < :max',
      ExpressionAttributeValues: { ':one': 1, ':max': MAX_ENDPOINTS_PER_ACCOUNT },
    },
  };
}

export function countOneLess(accountId: number): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { account_id: accountId, id: COUNT_ID },
      UpdateExpression: 'ADD endpoint_count :minus',
      ExpressionAttributeValues: { ':minus': -1 },
    },
  };
}

/** Fails its condition when the endpoint is gone (deleted by a concurrent request). */
export function deleteEndpointItem(accountId: number, id: number): TransactItem {
  return {
    Delete: { TableName: TABLE, Key: { account_id: accountId, id }, ConditionExpression: 'attribute_exists(id)' },
  };
}

/** Part of a rotation: the endpoint still exists. */
export function endpointExists(accountId: number, id: number): TransactItem {
  return {
    ConditionCheck: { TableName: TABLE, Key: { account_id: accountId, id }, ConditionExpression: 'attribute_exists(id)' },
  };
}

export async function findEndpoint(accountId: number, id: number): Promise<WebhookEndpoint | undefined> {
  if (id === COUNT_ID) return undefined;
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { account_id: accountId, id }, ConsistentRead: true }));
  return Item as WebhookEndpoint | undefined;
}

/** One page in ascending id order after `afterId` (≥ 0, so the count item is never in it). */
export async function listEndpoints(accountId: number, afterId: number, limit: number) {
  const page = await documents.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'account_id = :account AND id > :after',
      ExpressionAttributeValues: { ':account': accountId, ':after': afterId },
      ConsistentRead: true,
      Limit: limit + 1,
    }),
  );
  const items = (page.Items ?? []) as WebhookEndpoint[];
  return { items: items.slice(0, limit), more: items.length > limit };
}

/** Every endpoint of the account (at most 10): one Query. */
export async function endpointsOf(accountId: number): Promise<WebhookEndpoint[]> {
  return (await listEndpoints(accountId, COUNT_ID, MAX_ENDPOINTS_PER_ACCOUNT)).items;
}

/** The changeable fields, provided the endpoint is still as read (its updated_at). */
export function updateEndpoint(current: WebhookEndpoint, next: WebhookEndpoint): TransactItem {
  const enabling = current.status !== 'enabled' && next.status === 'enabled';
  // A new origin, or an endpoint enabled again, starts with the initial lanes again (lanes.ts).
  const removed = [...(enabling ? ['failing_since'] : []), ...(enabling || next.url !== current.url ? ['lanes', 'lanes_at'] : [])];
  return {
    Update: {
      TableName: TABLE,
      Key: { account_id: current.account_id, id: current.id },
      UpdateExpression:
        'SET #url = :url, event_types = :types, description = :description, #status = :status, updated_at = :updated, enabled_at = :enabled' +
        (removed.length > 0 ? ` REMOVE ${removed.join(', ')}` : ''),
      ConditionExpression: 'updated_at = :was',
      ExpressionAttributeNames: { '#url': 'url', '#status': 'status' },
      ExpressionAttributeValues: {
        ':url': next.url,
        ':types': next.event_types,
        ':description': next.description,
        ':status': next.status,
        ':updated': next.updated_at,
        ':enabled': next.enabled_at,
        ':was': current.updated_at,
      },
    },
  };
}

/** The sender disables an endpoint (410 Gone, or five days of failures); false if it already was. */
export async function disableEndpoint(accountId: number, id: number, now: Date): Promise<boolean> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { account_id: accountId, id },
        // updated_at only moves forward, so an If-Match taken before this no longer matches.
        UpdateExpression: 'SET #status = :disabled, updated_at = :now',
        ConditionExpression: '#status = :enabled AND updated_at < :now',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':disabled': 'disabled', ':enabled': 'enabled', ':now': now.toISOString() },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

/** Notes a failed attempt, which also puts its origin back to one lane; answers since when the endpoint has been failing. */
export async function noteFailure(accountId: number, id: number, now: Date): Promise<string | undefined> {
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { account_id: accountId, id },
        UpdateExpression: 'SET failing_since = if_not_exists(failing_since, :now), lanes = :one, lanes_at = :at',
        ConditionExpression: 'attribute_exists(id)',
        ExpressionAttributeValues: { ':now': now.toISOString(), ':one': 1, ':at': now.getTime() },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Attributes?.failing_since as string | undefined;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/** A success ends a run of failures. */
export async function noteSuccess(accountId: number, id: number): Promise<void> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { account_id: accountId, id },
        UpdateExpression: 'REMOVE failing_since',
        ConditionExpression: 'attribute_exists(failing_since)',
      }),
    );
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
  }
}

/**
 * Changes the lanes an endpoint's origin has earned (functions/webhooks/lanes.ts): to one after a
 * slow answer, whatever they were (`grow` false); more only from `from` (undefined: never written)
 * and once GROW_INTERVAL_MS has passed since the last change (`notBefore`), so that of the senders
 * that see the same backlog one grows them. False when the condition failed (another sender
 * changed them, the endpoint is gone).
 */
export async function changeLanes(
  accountId: number,
  id: number,
  change: { readonly to: number } & ({ readonly grow: false } | { readonly grow: true; readonly from: number | undefined; readonly notBefore: number }),
  now: Date,
): Promise<boolean> {
  const growth = change.grow
    ? {
        condition: ` AND ${change.from === undefined ? 'attribute_not_exists(lanes)' : 'lanes = :from'} AND (attribute_not_exists(lanes_at) OR lanes_at <= :notBefore)`,
        values: { ...(change.from === undefined ? {} : { ':from': change.from }), ':notBefore': change.notBefore },
      }
    : { condition: '', values: {} };
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { account_id: accountId, id },
        UpdateExpression: 'SET lanes = :to, lanes_at = :now',
        ConditionExpression: `attribute_exists(id)${growth.condition}`,
        ExpressionAttributeValues: { ':to': change.to, ':now': now.getTime(), ...growth.values },
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}
