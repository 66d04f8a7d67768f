import { createHash } from 'node:crypto';
import { sendToQueue as send, type QueuedMessage } from '#runtime/queue-client';

export type { QueuedMessage };

/**
 * The two queues of webhook attempts (functions/queues.ts):
 * - `webhookDeliveries` (FIFO) holds the attempts due now. A message's group is the receiver's
 *   origin and a lane of it, and SQS hands a group's next message to the sender only when the
 *   one before is done: whatever an origin does (hang for 15 s, fail, crawl), it occupies at most
 *   one sender per lane, LANES_PER_ORIGIN while it is healthy and one once it is failing, and
 *   every other origin's attempts leave beside it. The sender takes one message per invocation,
 *   so no batch mixes a hanging origin with a healthy one.
 * - `webhookRetries` (standard) holds the attempts that are not due yet, invisible until they
 *   are (DelaySeconds, at most 900 s); a longer wait is a chain of hops. When a message comes due
 *   the forwarder moves it to the deliveries queue. No timer lives in any function.
 *
 * Both are SQS, reached with the SDK at the URLs in the environment variables of queues.ts
 * (runtime/queue-client.ts).
 */
export interface DeliveryMessage {
  readonly account_id: number;
  readonly endpoint_id: number;
  readonly event_id: number;
  /** The delivery's generation when this message was sent (the retry route raises it). */
  readonly generation: number;
  /** Sends before this one. */
  readonly attempts: number;
  /** Epoch milliseconds when the attempt is due. */
  readonly due_at: number;
  /** The endpoint's origin (scheme, host, port) when the message was sent: its FIFO group. */
  readonly origin: string;
  /** The lane of the origin (laneFor): with the origin, the message group. */
  readonly lane: number;
  /**
   * Set on a copy sent back because another sender held the attempt: the end of that lease (epoch
   * milliseconds). Part of the deduplication id, so that the FIFO queue does not drop the copy as
   * the message it was sent for.
   */
  readonly after_lease?: number;
}

/** Senders one healthy origin may occupy at once (its FIFO groups); a failing origin gets one. */
export const LANES_PER_ORIGIN = 4;

/** The lane of an attempt: spread by event while the endpoint is healthy, lane 0 while it is failing. */
export const laneFor = (eventId: number, failing: boolean): number => (failing ? 0 : eventId % LANES_PER_ORIGIN);

/** Scheme, host and port of a URL: what a FIFO group and the attempt logs name, never a path or query. */
export const originOf = (url: string): string => new URL(url).origin;

/**
 * Where an attempt to this endpoint waits: its origin (as the URL is now) and its lane, spread
 * while the endpoint is healthy, lane 0 while it is failing.
 */
export function placeOf(
  endpoint: { readonly url: string; readonly failing_since?: string },
  eventId: number,
  failing = endpoint.failing_since !== undefined,
): Pick<DeliveryMessage, 'origin' | 'lane'> {
  return { origin: originOf(endpoint.url), lane: laneFor(eventId, failing) };
}

/** SQS's longest DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;

/**
 * The message group: a hash of the origin (a group id is at most 128 characters and an origin
 * may be longer; the hash also keeps the host out of SQS's metadata) and the lane.
 */
export function messageGroupOf(message: Pick<DeliveryMessage, 'origin' | 'lane'>): string {
  return `${createHash('sha256').update(message.origin).digest('base64url')}-${message.lane}`;
}

/** One attempt of one delivery in one lane: a copy sent again within 5 minutes (a stream retry of the fan-out) is dropped by SQS. */
export const deduplicationIdOf = (m: DeliveryMessage): string =>
  `${m.account_id}-${m.endpoint_id}-${m.event_id}-${m.generation}-${m.attempts}-${m.lane}${m.after_lease === undefined ? '' : `-${m.after_lease}`}`;

export function delaySecondsUntil(dueAt: number, now = Date.now()): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueAt - now) / 1000)));
}

/** Attempts due now → the deliveries queue (FIFO), grouped by origin and lane. */
export function enqueueDue(messages: readonly DeliveryMessage[]): Promise<void> {
  return send(
    'webhookDeliveries',
    messages.map((message) => ({ body: JSON.stringify(message), groupId: messageGroupOf(message), deduplicationId: deduplicationIdOf(message) })),
  );
}

/** Attempts due later → the retries queue, delayed until due (or by 900 s, the first hop of a longer wait). */
export function enqueueWaiting(messages: readonly DeliveryMessage[], now = Date.now()): Promise<void> {
  return send(
    'webhookRetries',
    messages.map((message) => ({ body: JSON.stringify(message), delaySeconds: delaySecondsUntil(message.due_at, now) })),
  );
}
