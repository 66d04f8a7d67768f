import { numberFromEnv } from '#runtime/config';

/**
 * How many attempts one account may have in flight to one origin at once: its **lanes**, each a
 * FIFO group of the deliveries queue (delivery-queue.ts), so SQS hands a lane's next message to a
 * sender only when the one before is done. docs/webhooks.md, "Isolation", says why; in short:
 * - an origin starts with INITIAL_LANES and earns more while it answers fast and messages wait
 *   for it (the lanes double at most once per GROW_INTERVAL_MS, up to ACCOUNT_LANES);
 * - a failed attempt or a slow answer (a 2xx after more than SLOW_ANSWER_MS) puts it back to one;
 * - the lanes of all the origins of one account share ACCOUNT_LANES (allocateLanes): what one
 *   account can hold of the senders' pool, however many endpoints it has and whatever they do.
 * The state is two attributes of the endpoint item (`lanes`, `lanes_at`), read with the endpoint
 * the sender reads anyway and written only when it changes.
 */

/** The attempt time-out (PRODUCT.md: a 2xx within 15 s succeeds); WEBHOOK_TIMEOUT_MS shortens it for tests. */
export const ATTEMPT_TIMEOUT_MS = numberFromEnv('WEBHOOK_TIMEOUT_MS', 15_000);

/**
 * A 2xx later than this is a slow answer: the origin goes back to one lane. 3 s, a fifth of the
 * time-out: an answer slower than the 3 s within which PRODUCT.md wants other accounts' first
 * attempts to leave holds a sender longer than they may wait for one, and a receiver that stores
 * the message and answers (docs/webhooks.md, "Answer quickly") takes milliseconds.
 * WEBHOOK_SLOW_MS changes it for tests (with their shorter time-out).
 */
export const SLOW_ANSWER_MS = numberFromEnv('WEBHOOK_SLOW_MS', Math.min(3000, ATTEMPT_TIMEOUT_MS / 5));

/** Only answers within this (a third of the slow bound: 1 s) earn more lanes; between the two the lanes stay. */
export const FAST_ANSWER_MS = SLOW_ANSWER_MS / 3;

/** A message that waited this long in its lane (since it was due) shows a backlog: more lanes would carry it sooner. */
export const BACKLOG_MS = 500;

/** The lanes grow at most once per this. */
export const GROW_INTERVAL_MS = 500;

/**
 * The lanes one account may hold at once, across all its origins: what it may take of the
 * senders' pool (maxConcurrency of functions/workers.ts). 40 carries PRODUCT.md's "an endpoint
 * answering within 100 ms keeps up with 200 events a second" in AWS (200/s × about 0.2 s an
 * attempt, the claim, the request and the record). WEBHOOK_ACCOUNT_LANES lowers it for tests.
 */
export const ACCOUNT_LANES = Math.max(1, Math.floor(numberFromEnv('WEBHOOK_ACCOUNT_LANES', 40)));

/**
 * The lanes of a new endpoint (or one whose URL changed, or that was enabled again): what every
 * origin had before the lanes adapted, so that no receiver starts slower than it did; a hanging
 * one holds them for its first time-out at most, within its account's ACCOUNT_LANES.
 */
export const INITIAL_LANES = 4;

/** What the lanes are computed from: an endpoint item's fields. */
export interface LaneState {
  readonly id: number;
  readonly status: string;
  readonly failing_since?: string;
  /** Lanes earned (absent: INITIAL_LANES). */
  readonly lanes?: number;
  /** Epoch milliseconds of the last change of `lanes`. */
  readonly lanes_at?: number;
}

/** The lanes an endpoint has earned: one while it is failing. */
export function earnedLanes(endpoint: LaneState): number {
  if (endpoint.failing_since !== undefined) return 1;
  return Math.min(ACCOUNT_LANES, Math.max(1, Math.floor(endpoint.lanes ?? INITIAL_LANES)));
}

/**
 * The lanes of each enabled endpoint of one account, by id: what each has earned, the account's
 * ACCOUNT_LANES shared max-min fairly when they ask for more (the smallest asks served first, the
 * rest split evenly; ties by id). Every endpoint gets at least one (an account has at most 10, and
 * ACCOUNT_LANES is 40; a test's smaller cap may be exceeded by one lane per endpoint).
 * The fan-out and the sender compute it from the same items, so they agree.
 */
export function allocateLanes(endpoints: readonly LaneState[]): Map<number, number> {
  const enabled = endpoints.filter((endpoint) => endpoint.status === 'enabled').sort((a, b) => earnedLanes(a) - earnedLanes(b) || a.id - b.id);
  const allocation = new Map<number, number>();
  let left = ACCOUNT_LANES;
  for (const [index, endpoint] of enabled.entries()) {
    const share = Math.max(1, Math.floor(left / (enabled.length - index)));
    const lanes = Math.min(earnedLanes(endpoint), share);
    allocation.set(endpoint.id, lanes);
    left -= lanes;
  }
  return allocation;
}

/**
 * The lane of an event among `lanes`: Lamping and Veach's jump consistent hash of the event id,
 * so that when an origin's lanes grow from n to m only the events that belong to the new lanes
 * change lane (about (m − n)/m of them), and when they shrink to one every event is in lane 0.
 */
export function laneOf(eventId: number, lanes: number): number {
  let key = BigInt.asUintN(64, BigInt(eventId));
  let b = -1;
  let j = 0;
  while (j < lanes) {
    b = j;
    key = BigInt.asUintN(64, key * 2862933555777941757n + 1n);
    j = Math.floor((b + 1) * (2 ** 31 / (Number(key >> 33n) + 1)));
  }
  return Math.max(0, b);
}

/** What an attempt's answer does to its endpoint's lanes: nothing, back to one, or `grow` to a number. */
export type LaneChange = { readonly kind: 'shrink' } | { readonly kind: 'grow'; readonly from: number | undefined; readonly to: number } | undefined;

export function laneChangeAfter(
  endpoint: LaneState,
  allocated: number,
  answer: {
    readonly succeeded: boolean;
    readonly durationMs: number;
    readonly waitedMs: number;
    /** The sender's own work before the request (the claim and the reads): when the database is what is slow, more lanes only add to its load. */
    readonly preparedMs?: number;
  },
  now: number,
): LaneChange {
  const earned = earnedLanes(endpoint);
  // A failure is noted with the failing streak (noteFailure), which puts the lanes to one too.
  if (!answer.succeeded) return undefined;
  if (answer.durationMs > SLOW_ANSWER_MS) return (endpoint.lanes ?? INITIAL_LANES) > 1 ? { kind: 'shrink' } : undefined;
  if (
    answer.durationMs <= FAST_ANSWER_MS &&
    (answer.preparedMs ?? 0) <= FAST_ANSWER_MS &&
    answer.waitedMs >= BACKLOG_MS &&
    // Lanes the account's share does not let it use would be earned for nothing.
    allocated >= earned &&
    earned < ACCOUNT_LANES &&
    now - (endpoint.lanes_at ?? 0) >= GROW_INTERVAL_MS
  ) {
    // `from` as the item has it (undefined: not yet written), the condition of the write.
    return { kind: 'grow', from: endpoint.lanes, to: Math.min(ACCOUNT_LANES, earned * 2) };
  }
  return undefined;
}
