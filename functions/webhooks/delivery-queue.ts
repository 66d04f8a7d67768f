import { createHash } from 'node:crypto';
import { sendToQueue as send, type QueuedMessage } from '#runtime/queue-client';

export type { QueuedMessage };
import { laneOf } from './lanes.ts';

/**
 * The two queues of webhook attempts (functions/queues.ts):
 * - `webhookDeliveries` (FIFO) holds the attempts due now. A message's group is the account, the
 *   receiver's origin and a lane of them, and SQS hands a group's next message to the sender only
 *   when the one before is done: whatever an origin does (hang for 15 s, fail, crawl), it occupies
 *   at most one sender per lane (lanes.ts: one while it fails or answers slowly, more while it
 *   answers fast and has a backlog, the account's origins together at most ACCOUNT_LANES), and
 *   every other origin's and account's attempts leave beside it. The sender takes one message per
 *   invocation, so no batch mixes a hanging origin with a healthy one.
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
  /** The endpoint's origin (scheme, host, port) when the message was sent: with the account, its FIFO group. */
  readonly origin: string;
  /** The lane of the account's origin (lanes.ts laneOf): with the account and the origin, the message group. */
  readonly lane: number;
  /**
   * Set on a copy sent back because another sender held the attempt: the end of that lease (epoch
   * milliseconds). Part of the deduplication id, so that the FIFO queue does not drop the copy as
   * the message it was sent for.
   */
  readonly after_lease?: number;
  /** Times the sender moved this attempt to another lane unsent (absent: none); part of the deduplication id. */
  readonly moves?: number;
}

/** Scheme, host and port of a URL: what a FIFO group and the attempt logs name, never a path or query. */
export const originOf = (url: string): string => new URL(url).origin;

/**
 * Where an attempt to this endpoint waits: its origin (as the URL is now) and its lane among the
 * `lanes` the account's origin has now (lanes.ts: one while the endpoint is failing or slow).
 */
export function placeOf(endpoint: { readonly url: string }, eventId: number, lanes: number): Pick<DeliveryMessage, 'origin' | 'lane'> {
  return { origin: originOf(endpoint.url), lane: laneOf(eventId, lanes) };
}

/** SQS's longest DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;

/**
 * The message group: a hash of the account and the origin (a group id is at most 128 characters
 * and an origin may be longer; the hash also keeps the host out of SQS's metadata) and the lane.
 * The account is in it so that two accounts whose endpoints share an origin never wait in each
 * other's lanes.
 */
export function messageGroupOf(message: Pick<DeliveryMessage, 'account_id' | 'origin' | 'lane'>): string {
  return `${createHash('sha256').update(`${message.account_id} ${message.origin}`).digest('base64url')}-${message.lane}`;
}

/**
 * One attempt of one delivery in one lane: a copy sent again within 5 minutes (a stream retry of
 * the fan-out) is dropped by SQS. A move counts: a message moved out of a lane and back within 5
 * minutes is a new message, not a copy; so does a copy sent back after another sender's lease.
 */
export const deduplicationIdOf = (m: DeliveryMessage): string =>
  `${m.account_id}-${m.endpoint_id}-${m.event_id}-${m.generation}-${m.attempts}-${m.lane}${m.moves ? `-m${m.moves}` : ''}${m.after_lease === undefined ? '' : `-${m.after_lease}`}`;

export function delaySecondsUntil(dueAt: number, now = Date.now()): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueAt - now) / 1000)));
}

/** Attempts due now → the deliveries queue (FIFO), grouped by account, origin and lane. */
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
