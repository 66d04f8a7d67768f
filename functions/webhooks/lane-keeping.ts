import { changeLanes, type WebhookEndpoint } from '#data/webhook-endpoints';
import { logger } from '#runtime/observability';
import { placeOf, type DeliveryMessage } from './delivery-queue.ts';
import { allocateLanes, BACKLOG_MS, GROW_INTERVAL_MS, laneChangeAfter } from './lanes.ts';
import type { AttemptResult } from './post-webhook.ts';

/**
 * The sender's side of the lanes (lanes.ts): before a request, whether the message waits where
 * its account's origin's lanes say it should; after it, what its answer does to them.
 */

/**
 * The lanes the endpoint has now (its share of its account's) and, when the message must move
 * unsent, where to:
 * - another origin (the URL changed), or a lane the origin no longer has (it failed or answered
 *   slowly, or the account's share shrank): always, so that a lane that should not exist holds
 *   no sender for longer than a move takes;
 * - another lane of the same origin (the lanes grew since it was queued) when it waited at least
 *   BACKLOG_MS: the lane it is in is backed up, the new lanes are not. Without a backlog it is
 *   sent where it is (a move costs a release, a send and an invocation for nothing).
 */
export function misplaced(
  message: DeliveryMessage,
  endpoints: readonly WebhookEndpoint[],
  endpoint: WebhookEndpoint,
  now: Date,
): { readonly allocated: number; readonly move?: Pick<DeliveryMessage, 'origin' | 'lane'> } {
  const allocated = allocateLanes(endpoints).get(endpoint.id) ?? 1;
  const place = placeOf(endpoint, message.event_id, allocated);
  const backlogged = now.getTime() - message.due_at >= BACKLOG_MS;
  const move = place.origin !== message.origin || message.lane >= allocated || (place.lane !== message.lane && backlogged);
  return move ? { allocated, move: place } : { allocated };
}

/** After an attempt: back to one lane after a slow answer, more after a fast one that waited (a failure is noted by noteFailure). */
export async function laneChangeOf(
  endpoint: WebhookEndpoint,
  allocated: number,
  succeeded: boolean,
  result: AttemptResult,
  message: DeliveryMessage,
  now: Date,
  preparedMs: number,
): Promise<void> {
  const answer = { succeeded, durationMs: result.durationMs, waitedMs: now.getTime() - message.due_at, preparedMs };
  const change = laneChangeAfter(endpoint, allocated, answer, now.getTime());
  if (!change) return;
  const changed =
    change.kind === 'shrink'
      ? await changeLanes(endpoint.account_id, endpoint.id, { grow: false, to: 1 }, now)
      : await changeLanes(endpoint.account_id, endpoint.id, { grow: true, from: change.from, to: change.to, notBefore: now.getTime() - GROW_INTERVAL_MS }, now);
  if (changed) {
    logger.info('webhook lanes changed', {
      account_id: endpoint.account_id,
      endpoint_id: endpoint.id,
      lanes: change.kind === 'shrink' ? 1 : change.to,
      reason: change.kind === 'shrink' ? 'slow_answer' : 'fast_with_backlog',
      duration_ms: result.durationMs,
    });
  }
}
