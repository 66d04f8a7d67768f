import type { SQSRecord } from 'aws-lambda';
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { claimAttempt, recordAttempt, releaseClaim, type AttemptOutcome } from '#data/webhook-deliveries';
import { disableEndpoint, endpointsOf, noteFailure, noteSuccess } from '#data/webhook-endpoints';
import { signingSecrets } from '#data/webhook-secrets';
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
 * - stale (the delivery moved on: another generation, more attempts, done), or a copy of a
 *   message another sender is working on: nothing (the claim's condition fails);
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
 * failure, and SQS delivers it again after its visibility timeout.
 */
/** Longer than an attempt can take, so that a second copy of the message cannot send while the first is in flight. */
const LEASE_MS = ATTEMPT_TIMEOUT_MS + 45_000;

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
    await processMessage(JSON.parse(record.body) as DeliveryMessage);
  } catch (error) {
    logger.error('webhook message failed; the queue delivers it again', {
      message_id: record.messageId,
      error_name: (error as Error).name,
      error_message: (error as Error).message,
    });
    throw error;
  }
}

export async function processMessage(message: DeliveryMessage): Promise<void> {
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
  const [delivery, endpoints, secrets] = await Promise.all([
    claimAttempt(expected, now, LEASE_MS),
    endpointsOf(key.accountId),
    signingSecrets(key.accountId, key.endpointId, now),
  ]);
  if (!delivery) return;
  const endpoint = endpoints.find((one) => one.id === key.endpointId);
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
  if (recorded && nextAt !== undefined) {
    await enqueueWaiting([{ ...message, attempts, due_at: nextAt, ...placeOf(endpoint, message.event_id, 1), moves: undefined }]);
  }
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
