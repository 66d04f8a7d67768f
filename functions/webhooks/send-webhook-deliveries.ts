import type { SQSRecord } from 'aws-lambda';
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { claimAttempt, recordAttempt, releaseClaim, type AttemptOutcome, type Claim, type WebhookDelivery } from '#data/webhook-deliveries';
import { disableEndpoint, endpointsOf, noteFailure, noteSuccess, type WebhookEndpoint } from '#data/webhook-endpoints';
import { signingSecrets } from '#data/webhook-secrets';
import { queues } from '#functions/queues';
import { numberFromEnv } from '#runtime/config';
import { logger, metrics } from '#runtime/observability';
import { worker } from '#runtime/worker-chain';
import { postWebhook, type AttemptResult } from './post-webhook.ts';
import { ATTEMPT_TIMEOUT_MS } from './lanes.ts';
import { laneChangeOf, misplaced } from './lane-keeping.ts';
import { enqueueDue, enqueueWaiting, originOf, placeOf, type DeliveryMessage } from './delivery-queue.ts';
import { DISABLE_AFTER_FAILING_MS, retryDelaySeconds, webhookHeaders, webhookPayload } from './rules.ts';

/**
 * The deliveries queue (FIFO, grouped by the receiver's origin and lane; one message per
 * invocation, so a hanging receiver holds one sender and only its own lane) → one attempt per
 * message. Per message:
 * - not yet due: sent to the retries queue with the rest of the wait (≤ 900 s per hop);
 * - stale (the delivery moved on: another generation, more attempts, done): nothing (the claim's
 *   condition fails), unless this is a message handed over again whose first receive recorded
 *   its attempt and then failed before it sent the next: the next is sent now;
 * - claimed by another sender (a live lease: a copy, or a sender that failed after its claim and
 *   could not release it): sent back to the retries queue, due when the lease ends, never
 *   dropped: the holder may be dead, and then this copy makes the attempt;
 * - endpoint deleted or disabled: the delivery ends `failed` without a request;
 * - the message waits in a lane its account's origin no longer has (the endpoint failed or
 *   answered slowly, or moved to another origin), or in a backlogged lane while the origin has
 *   more lanes now (lane-keeping.ts): the claim is released and the message moves to the right
 *   group unsent, so a backlog queued while the receiver was healthy does not keep several lanes
 *   hanging, and one queued while it had fewer lanes spreads over the new ones;
 * - else the attempt is claimed, signed with the endpoint's secrets, sent, and recorded: a 2xx
 *   succeeds; 410 Gone fails the delivery and disables the endpoint; anything else schedules the
 *   next attempt (a new message) or, after the last, fails the delivery; five days of failures
 *   disable the endpoint.
 * A message whose processing throws (the database, the queue) is reported as a batch item
 * failure, and SQS delivers it again after its visibility timeout; its claim, if it took one and
 * did not record, is released first (best effort: the database may be what failed), so that the
 * message handed over again can claim at once.
 */
/**
 * Declared with the queue's visibility (functions/queues.ts, checked by the stack): longer than a
 * sender can run, so that a second copy of the message cannot send while the first is in flight.
 * WEBHOOK_LEASE_SECONDS shortens it for the tests only (an infra test checks no function in AWS has it).
 */
const LEASE_MS = numberFromEnv('WEBHOOK_LEASE_SECONDS', queues.webhookDeliveries.claimLeaseSeconds) * 1000;
if (LEASE_MS <= ATTEMPT_TIMEOUT_MS) throw new Error(`The claim's lease (${LEASE_MS} ms) must outlast an attempt (${ATTEMPT_TIMEOUT_MS} ms)`);

/**
 * Powertools' FIFO processor: the records of a batch one after the other, and after a failure the
 * rest of the batch reported failed unprocessed, so a group's order holds whatever the batch size
 * (the event source's is 1). A batch whose every record failed is answered as failed items, not
 * thrown (throwOnFullBatchFailure: false): SQS hands them over again either way, and the
 * invocation is not counted as an error. A processor per invocation: it keeps the batch's state,
 * and the local stack runs up to 50 invocations side by side in one process.
 */
export const handler = worker('queue', 'sendWebhookDeliveries').handler((event) =>
  processPartialResponse(event, sendRecord, new SqsFifoPartialProcessorAsync(), { throwOnFullBatchFailure: false }),
);

async function sendRecord(record: SQSRecord): Promise<void> {
  try {
    const redelivered = Number(record.attributes?.ApproximateReceiveCount ?? 1) > 1;
    await processMessage(JSON.parse(record.body) as DeliveryMessage, { redelivered });
  } catch (error) {
    logger.error('webhook message failed; the queue delivers it again', {
      message_id: record.messageId,
      error_name: (error as Error).name,
      error_message: (error as Error).message,
    });
    throw error;
  }
}

export async function processMessage(message: DeliveryMessage, receive: { readonly redelivered?: boolean } = {}): Promise<void> {
  if (message.due_at > Date.now() + 1000) {
    await enqueueWaiting([message]); // not due: back to the retries queue for the rest of the wait
    return;
  }
  const key = { accountId: message.account_id, endpointId: message.endpoint_id, eventId: message.event_id };
  const expected = { ...key, generation: message.generation, attempts: message.attempts };
  const now = new Date();
  // One round trip before the request: the claim (a conditional write that is also the check
  // that the message is not stale) and the two reads, side by side. The account's endpoints (one
  // Query), not just this one: its lanes are its share of the account's (lanes.ts).
  const claiming = claimAttempt(expected, now, LEASE_MS);
  let claim: Claim, endpoints: WebhookEndpoint[], secrets: string[] | undefined;
  try {
    [claim, endpoints, secrets] = await Promise.all([claiming, endpointsOf(key.accountId), signingSecrets(key.accountId, key.endpointId, now)]);
  } catch (error) {
    // A read failed beside a claim that may have been taken: give it back.
    if (await claiming.then((taken) => 'claimed' in taken).catch(() => false)) await releaseAfterFault(expected);
    throw error;
  }
  if ('heldUntil' in claim) {
    // Another sender holds the attempt. It may be dead (its database failed after the claim):
    // this copy comes back once the lease has ended, and claims it then if nobody recorded it.
    // A copy of its own for the FIFO queue's deduplication (after_lease).
    await enqueueWaiting([{ ...message, due_at: claim.heldUntil + 1000, after_lease: claim.heldUntil }]);
    logAttempt(message, 'lease_held');
    return;
  }
  const endpoint = endpoints.find((one) => one.id === key.endpointId);
  if ('stale' in claim) {
    if (receive.redelivered && endpoint) await resumeChain(message, claim.stale, endpoint);
    return;
  }
  try {
    await attempt(message, expected, claim.claimed, endpoints, endpoint, secrets, now);
  } catch (error) {
    await releaseAfterFault(expected);
    throw error;
  }
}

/**
 * Gives a claim back after a fault, so that the message handed over again can claim at once;
 * best effort (the database may be what failed: then the lease ends by itself). After an
 * attempt was recorded its condition fails and it changes nothing.
 */
async function releaseAfterFault(expected: Parameters<typeof releaseClaim>[0]): Promise<void> {
  await releaseClaim(expected).catch((error: Error) => {
    logger.warn('webhook claim not released after a fault; it ends with its lease', { error_name: error.name });
  });
}

/**
 * A message handed over again that finds its attempt recorded, the delivery pending and its next
 * attempt scheduled: its first receive failed between the record and the next message (the queue
 * or the database), so the next message may never have been sent. It is sent (a copy, if it was,
 * sends nothing: the claim).
 */
async function resumeChain(message: DeliveryMessage, delivery: WebhookDelivery | undefined, endpoint: WebhookEndpoint): Promise<void> {
  if (!delivery || delivery.generation !== message.generation || delivery.attempts !== message.attempts + 1) return;
  if (delivery.status !== 'pending' || !delivery.next_attempt_at) return;
  await enqueueWaiting([nextMessage(message, delivery.attempts, Date.parse(delivery.next_attempt_at), endpoint)]);
  logAttempt(message, 'next_resent');
}

/** The next attempt's message: it waits in the failing origin's one lane, neither moved nor sent back after a lease. */
const nextMessage = (message: DeliveryMessage, attempts: number, dueAt: number, endpoint: WebhookEndpoint): DeliveryMessage => {
  const { after_lease: _, moves: __, ...rest } = message;
  return { ...rest, attempts, due_at: dueAt, ...placeOf(endpoint, message.event_id, 1) };
};

/** The claimed attempt: sent (or ended, or moved) and recorded. */
async function attempt(
  message: DeliveryMessage,
  expected: Parameters<typeof recordAttempt>[0],
  delivery: WebhookDelivery,
  endpoints: readonly WebhookEndpoint[],
  endpoint: WebhookEndpoint | undefined,
  secrets: string[] | undefined,
  now: Date,
): Promise<void> {
  const key = { accountId: message.account_id, endpointId: message.endpoint_id };
  if (endpoint?.status !== 'enabled' || !secrets) {
    await recordAttempt(expected, { status: 'failed', sent: false, lastAttemptAt: null, lastResponseStatus: null, nextAttemptAt: null });
    logAttempt(message, endpoint?.status === 'disabled' ? 'endpoint_disabled' : 'endpoint_deleted');
    return;
  }
  const lanes = misplaced(message, endpoints, endpoint, now);
  if (lanes.move) {
    // Released first: the moved copy claims the same (generation, attempts).
    const moved = { ...message, ...lanes.move, moves: (message.moves ?? 0) + 1 };
    if (await releaseClaim(expected)) await enqueueDue([moved]);
    logAttempt(message, 'moved', undefined, undefined, endpoint.url, moved.lane);
    return;
  }

  const preparedMs = Date.now() - now.getTime();
  const body = webhookPayload(delivery.event);
  const result = await postWebhook(endpoint.url, webhookHeaders(secrets, delivery.event, body, now), body);
  const attempts = message.attempts + 1;
  const succeeded = result.status !== undefined && result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const delaySeconds = succeeded || gone ? undefined : retryDelaySeconds(attempts, result.retryAfter, now);
  const nextAt = delaySeconds === undefined ? undefined : now.getTime() + delaySeconds * 1000;
  const outcome: AttemptOutcome = {
    status: succeeded ? 'succeeded' : nextAt === undefined ? 'failed' : 'pending',
    sent: true,
    lastAttemptAt: now.toISOString(),
    lastResponseStatus: result.status ?? null,
    nextAttemptAt: nextAt === undefined ? null : new Date(nextAt).toISOString(),
  };
  const [recorded] = await Promise.all([
    recordAttempt(expected, outcome),
    succeeded && endpoint.failing_since ? noteSuccess(key.accountId, key.endpointId) : undefined,
    laneChangeOf(endpoint, lanes.allocated, succeeded, result, message, now, preparedMs),
  ]);
  logAttempt(message, outcome.status, result, attempts, endpoint.url);

  if (succeeded) {
    // A success ends a run of failures (noted above, beside the record of the attempt).
  } else if (gone) {
    if (await disableEndpoint(key.accountId, key.endpointId, now)) logger.warn('webhook endpoint disabled: it answered 410 Gone', { ...ids(message) });
  } else {
    const since = await noteFailure(key.accountId, key.endpointId, now);
    if (since && now.getTime() - Date.parse(since) >= DISABLE_AFTER_FAILING_MS) {
      if (await disableEndpoint(key.accountId, key.endpointId, now)) {
        logger.warn('webhook endpoint disabled: every attempt has failed for five days', { ...ids(message), failing_since: since });
      }
    }
  }
  // Only the copy that recorded the attempt schedules the next: a chain of retries never forks.
  // It waits in the failing origin's one lane.
  if (recorded && nextAt !== undefined) await enqueueWaiting([nextMessage(message, attempts, nextAt, endpoint)]);
}

const ids = (message: DeliveryMessage) => ({ account_id: message.account_id, endpoint_id: message.endpoint_id, event_id: message.event_id });

/** One line per attempt: ids, origin, status and duration. Never the URL's path or query (they may hold a receiver's token), never a secret. */
function logAttempt(message: DeliveryMessage, outcome: string, result?: AttemptResult, attempt?: number, url?: string, movedToLane?: number) {
  logger.info('webhook attempt', {
    ...ids(message),
    generation: message.generation,
    attempt,
    outcome,
    ...(url ? { origin: originOf(url) } : {}),
    lane: message.lane,
    ...(movedToLane === undefined ? {} : { moved_to_lane: movedToLane }),
    ...(result ? { response_status: result.status ?? null, duration_ms: result.durationMs, ...(result.error ? { error_code: result.error } : {}) } : {}),
  });
  if (result) {
    metrics.addMetric('WebhookAttempts', MetricUnit.Count, 1);
    metrics.addMetric('WebhookAttemptsFailed', MetricUnit.Count, outcome === 'succeeded' ? 0 : 1);
    metrics.addMetric('WebhookAttemptDuration', MetricUnit.Milliseconds, result.durationMs);
  }
  if (outcome === 'failed') metrics.addMetric('WebhookDeliveriesFailed', MetricUnit.Count, 1);
}
