import { randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { numberFromEnv, tableName } from '#runtime/config';
import type { EventRecord } from './events.ts';

const TABLE = tableName('webhookDeliveries');

/** How long a delivery's record stays listable. */
const RETENTION_SECONDS = Math.round(numberFromEnv('EVENT_RETENTION_DAYS', 30) * 86_400);

type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** The event as the payload's `data` shows it: kept here, since the feed's copy may be acknowledged. */
export type DeliveredEvent = Pick<EventRecord, 'id' | 'type' | 'resource_id' | 'created_at'>;

/**
 * One event's delivery to one endpoint. `generation` is raised by the retry route: the messages
 * of an older generation are stale and do nothing. `attempts` counts sends so far; an attempt is
 * claimed (lease_until) before it is sent and recorded after, each under the condition that
 * generation and attempts are still those of the message, so two copies of one message (queues
 * deliver at least once) send once and never fork the chain of retries.
 */
export interface WebhookDelivery {
  endpoint_key: string;
  event_id: number;
  account_id: number;
  endpoint_id: number;
  event: DeliveredEvent;
  status: DeliveryStatus;
  attempts: number;
  generation: number;
  last_attempt_at: string | null;
  last_response_status: number | null;
  next_attempt_at: string | null;
  /** Epoch milliseconds until which one sender holds the attempt. */
  lease_until?: number;
  /** Who holds it: a random id per claim, so that a claim the SDK sent again after a lost answer knows it is its own. */
  lease_owner?: string;
  created_at: string;
  expires_at: number;
}

const endpointKey = (accountId: number, endpointId: number) => `${accountId}#${endpointId}`;
const keyOf = (accountId: number, endpointId: number, eventId: number) => ({ endpoint_key: endpointKey(accountId, endpointId), event_id: eventId });

export function newDelivery(accountId: number, endpointId: number, event: DeliveredEvent, now: Date): WebhookDelivery {
  return {
    endpoint_key: endpointKey(accountId, endpointId),
    event_id: event.id,
    account_id: accountId,
    endpoint_id: endpointId,
    event: { id: event.id, type: event.type, resource_id: event.resource_id, created_at: event.created_at },
    status: 'pending',
    attempts: 0,
    generation: 1,
    last_attempt_at: null,
    last_response_status: null,
    next_attempt_at: now.toISOString(),
    created_at: now.toISOString(),
    expires_at: Math.floor(now.getTime() / 1000) + RETENTION_SECONDS,
  };
}

/** Writes a new delivery; false when it exists (a stream record processed again). */
export async function putNewDelivery(delivery: WebhookDelivery): Promise<boolean> {
  try {
    await documents.send(new PutCommand({ TableName: TABLE, Item: delivery, ConditionExpression: 'attribute_not_exists(event_id)' }));
    return true;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

export async function findDelivery(accountId: number, endpointId: number, eventId: number): Promise<WebhookDelivery | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: keyOf(accountId, endpointId, eventId), ConsistentRead: true }));
  return Item as WebhookDelivery | undefined;
}

/** One page of an endpoint's deliveries in ascending event id after `afterEventId`. */
export async function listDeliveries(accountId: number, endpointId: number, afterEventId: number, limit: number) {
  const page = await documents.send(
    new QueryCommand({
      TableName: TABLE,
      KeyConditionExpression: 'endpoint_key = :key AND event_id > :after',
      ExpressionAttributeValues: { ':key': endpointKey(accountId, endpointId), ':after': afterEventId },
      ConsistentRead: true,
      Limit: limit + 1,
    }),
  );
  const items = (page.Items ?? []) as WebhookDelivery[];
  return { items: items.slice(0, limit), more: items.length > limit };
}

interface Expected {
  readonly accountId: number;
  readonly endpointId: number;
  readonly eventId: number;
  readonly generation: number;
  readonly attempts: number;
}

const conditionFailed = (error: unknown) => (error as Error).name === 'ConditionalCheckFailedException';

/**
 * What a claim found: the attempt is this sender's (`claimed`, the delivery); another sender
 * holds it until `heldUntil` (epoch ms; this copy must come back then, never be dropped: the
 * holder may have died); or the message is `stale` (another generation, more attempts, done),
 * with the delivery as it is when it exists.
 */
export type Claim = { readonly claimed: WebhookDelivery } | { readonly heldUntil: number } | { readonly stale: WebhookDelivery | undefined };

/**
 * Takes the attempt for `leaseMs`. No read first: the condition is the check, and a failed
 * condition answers the item as it was (ReturnValuesOnConditionCheckFailure), which tells a live
 * lease from a stale message.
 */
export async function claimAttempt(expected: Expected, now: Date, leaseMs: number): Promise<Claim> {
  const owner = randomUUID();
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: keyOf(expected.accountId, expected.endpointId, expected.eventId),
        UpdateExpression: 'SET lease_until = :until, lease_owner = :owner',
        ConditionExpression:
          'generation = :generation AND attempts = :attempts AND #status = :pending AND (attribute_not_exists(lease_until) OR lease_until < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':until': now.getTime() + leaseMs,
          ':owner': owner,
          ':generation': expected.generation,
          ':attempts': expected.attempts,
          ':pending': 'pending',
          ':now': now.getTime(),
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { claimed: Attributes as WebhookDelivery };
  } catch (error) {
    if (!conditionFailed(error)) throw error;
    const item = (error as { Item?: Record<string, AttributeValue> }).Item;
    const was = item ? (unmarshall(item) as WebhookDelivery) : undefined;
    const sameAttempt = was?.generation === expected.generation && was.attempts === expected.attempts && was.status === 'pending';
    // The SDK sent the claim again after an answer it lost (a time-out): the first one took it.
    if (sameAttempt && was.lease_owner === owner) return { claimed: was };
    if (sameAttempt && was.lease_until !== undefined && was.lease_until >= now.getTime()) return { heldUntil: was.lease_until };
    return { stale: was };
  }
}

/**
 * Gives a claimed attempt back unsent (the sender moves its message to another lane), so that
 * the moved copy can claim it at once; false when the delivery moved on meanwhile.
 */
export async function releaseClaim(expected: Expected): Promise<boolean> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: keyOf(expected.accountId, expected.endpointId, expected.eventId),
        UpdateExpression: 'REMOVE lease_until, lease_owner',
        ConditionExpression: 'generation = :generation AND attempts = :attempts AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':generation': expected.generation, ':attempts': expected.attempts, ':pending': 'pending' },
      }),
    );
    return true;
  } catch (error) {
    if (conditionFailed(error)) return false;
    throw error;
  }
}

export interface AttemptOutcome {
  readonly status: DeliveryStatus;
  /** Whether a request was sent (false: the endpoint was gone or disabled when the attempt came due). */
  readonly sent: boolean;
  readonly lastAttemptAt: string | null;
  readonly lastResponseStatus: number | null;
  readonly nextAttemptAt: string | null;
}

/** Records the claimed attempt's outcome; false when a retry started a new generation meanwhile. */
export async function recordAttempt(expected: Expected, outcome: AttemptOutcome): Promise<boolean> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: keyOf(expected.accountId, expected.endpointId, expected.eventId),
        UpdateExpression:
          'SET attempts = :attempts, #status = :status, next_attempt_at = :next' +
          (outcome.sent ? ', last_attempt_at = :last, last_response_status = :response' : '') +
          ' REMOVE lease_until, lease_owner',
        ConditionExpression: 'generation = :generation AND attempts = :was',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':attempts': expected.attempts + (outcome.sent ? 1 : 0),
          ':status': outcome.status,
          ':next': outcome.nextAttemptAt,
          ...(outcome.sent ? { ':last': outcome.lastAttemptAt, ':response': outcome.lastResponseStatus } : {}),
          ':generation': expected.generation,
          ':was': expected.attempts,
        },
      }),
    );
    return true;
  } catch (error) {
    if (conditionFailed(error)) return false;
    throw error;
  }
}

/** The retry route: a new generation, due now; undefined when the delivery does not exist. */
export async function restartDelivery(accountId: number, endpointId: number, eventId: number, now: Date): Promise<WebhookDelivery | undefined> {
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: keyOf(accountId, endpointId, eventId),
        UpdateExpression: 'SET generation = generation + :one, #status = :pending, next_attempt_at = :now REMOVE lease_until, lease_owner',
        ConditionExpression: 'attribute_exists(event_id)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':one': 1, ':pending': 'pending', ':now': now.toISOString() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes as WebhookDelivery;
  } catch (error) {
    if (conditionFailed(error)) return undefined;
    throw error;
  }
}
