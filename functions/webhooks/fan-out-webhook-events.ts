import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EventRecord } from '#data/events';
import { newDelivery, putNewDelivery } from '#data/webhook-deliveries';
import { endpointsOf, type WebhookEndpoint } from '#data/webhook-endpoints';
import { logger, metrics } from '#runtime/observability';
import { worker } from '#runtime/worker-chain';
import { enqueueDue, placeOf, type DeliveryMessage } from './delivery-queue.ts';
import { allocateLanes } from './lanes.ts';

/**
 * The events table's stream (NEW_IMAGE) → one delivery per enabled endpoint of the event's
 * account that subscribes to its type, and a first message on the deliveries queue for each
 * (FIFO, grouped by the account, the receiver's origin and a lane of them).
 * Only INSERTs are new events (the event source's filter passes only them; an acknowledging
 * DELETE or TTL's removal is a REMOVE and does nothing).
 *
 * Written to be run again: a delivery is put only if absent, and its message is sent either way
 * (a stream retry after a failure between the two must not lose it); the sender's claim on
 * (generation, attempts) makes a second copy of a message send nothing. A record that fails is
 * reported (reportBatchItemFailures): the stream retries from it, later records included.
 * Not Powertools' batch processor: a stream checkpoints at one record, so the answer names the
 * first failed record in stream order (the processor lists every failure, in the order they
 * happened) and the count of deliveries stops there (the records after it are handed over again).
 */
export function isSubscribed(endpoint: WebhookEndpoint, event: Pick<EventRecord, 'type' | 'created_at'>): boolean {
  return (
    endpoint.status === 'enabled' &&
    // Events committed before the endpoint was (re-)enabled are never sent to it.
    event.created_at >= endpoint.enabled_at &&
    (endpoint.event_types.includes('*') || endpoint.event_types.includes(event.type))
  );
}

export const handler = worker('stream', 'fanOutWebhookEvents').handler(async (stream) => {
  const { failedAt } = await fanOutRecords(stream.Records, 'the stream retries from this record');
  return { batchItemFailures: failedAt ? [{ itemIdentifier: failedAt.dynamodb?.SequenceNumber ?? '' }] : [] };
});

/**
 * Fans records out side by side (deliveries are in no guaranteed order) and answers the first
 * failed record in stream order, if any (logged with `then`: what happens to it next); the
 * deliveries created before it are counted. Shared with the replay of given-up batches
 * (replay-failed-fan-outs.ts).
 */
export async function fanOutRecords(records: readonly DynamoDBRecord[], then: string): Promise<{ readonly failedAt?: DynamoDBRecord }> {
  const endpointsByAccount = new Map<number, Promise<WebhookEndpoint[]>>();
  let deliveries = 0;
  try {
    const outcomes = await Promise.allSettled(records.map((record) => fanOut(record, endpointsByAccount)));
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled') {
        deliveries += outcome.value;
        continue;
      }
      const record = records[index]!;
      const error = outcome.reason as Error;
      logger.error(`webhook fan-out failed; ${then}`, {
        sequence_number: record.dynamodb?.SequenceNumber,
        error_name: error.name,
        error_message: error.message,
      });
      return { failedAt: record };
    }
    return {};
  } finally {
    // Flushed by the worker chain, after an error too.
    metrics.addMetric('WebhookDeliveriesCreated', MetricUnit.Count, deliveries);
  }
}

async function fanOut(record: DynamoDBRecord, endpointsByAccount: Map<number, Promise<WebhookEndpoint[]>>): Promise<number> {
  if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) return 0;
  const event = unmarshall(record.dynamodb.NewImage as Record<string, AttributeValue>) as EventRecord;
  if (!endpointsByAccount.has(event.account_id)) endpointsByAccount.set(event.account_id, endpointsOf(event.account_id));
  const endpoints = await endpointsByAccount.get(event.account_id)!;
  const targets = endpoints.filter((endpoint) => isSubscribed(endpoint, event));
  if (targets.length === 0) return 0;
  // Each endpoint's lanes: its share of its account's (lanes.ts), as the sender computes them.
  const lanes = allocateLanes(endpoints);
  const now = new Date();
  const messages: DeliveryMessage[] = [];
  await Promise.all(targets.map((endpoint) => putNewDelivery(newDelivery(event.account_id, endpoint.id, event, now))));
  for (const endpoint of targets) {
    messages.push({
      account_id: event.account_id,
      endpoint_id: endpoint.id,
      event_id: event.id,
      generation: 1,
      attempts: 0,
      due_at: now.getTime(),
      ...placeOf(endpoint, event.id, lanes.get(endpoint.id) ?? 1),
    });
  }
  await enqueueDue(messages);
  return targets.length;
}
