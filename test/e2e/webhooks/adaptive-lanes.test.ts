import '../../support/webhooks/wide-lanes-env.ts';
import '../../support/webhooks/env.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { attemptsBegunAfter, peakOpenAmong, startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import { oneLaneSeenAt, retryingOn503 } from '../../support/webhooks/lanes.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { ACCOUNT_LANES, FAST_ANSWER_MS, INITIAL_LANES, SLOW_ANSWER_MS } from '../../../functions/webhooks/lanes.ts';

/**
 * Adaptive lanes (functions/webhooks/lanes.ts), seen from the receiver: the most requests it holds
 * open at once. A receiver that answers fast while a backlog waits gets more than the initial 4
 * lanes, never more than its account's cap (8 here, test/support/webhooks/wide-lanes-env.ts); one
 * that then answers slowly (a 2xx after the slow bound) or fails falls back to one.
 */
const ctx = useLocalApi();
let webhooks: LocalWebhooks;
let receiver: Receiver;
beforeAll(async () => {
  webhooks = await startTestWebhooks();
  receiver = await startReceiver();
});
afterAll(async () => {
  await webhooks?.close();
  await receiver?.close();
});

let serial = 0;
/** `count` voids, 8 at a time (a till's rush); their event ids. */
async function rush(count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        next++;
        const body = { transaction: { site_id: 'lanes', pos_transaction_id: `L${++serial}` } };
        // A loaded DynamoDB Local answers 503 now and then: a till retries the same void.
        const voided = await retryingOn503(() => send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/voided_transactions', { body })));
        expect(voided.status, voided.text).toBe(200);
        ids.push(String(voided.json.transaction.display_messages[0].message_content.event_id));
      }
    }),
  );
  return ids;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const arrivedIds = (path: string) => new Set(receiver.on(path).map((r) => r.headers['webhook-id']));
const arrived = (path: string, ids: string[]) => ids.every((id) => arrivedIds(path).has(id));

/** Grows the lanes of a fresh endpoint at `path` with a backlog of 160 events to a receiver answering in 600 ms; answers the endpoint id. */
async function grow(path: string): Promise<number> {
  expect(600).toBeLessThan(FAST_ANSWER_MS);
  receiver.behave(path, { status: 204, delayMs: 600 });
  const headers = { 'Idempotency-Key': randomUUID() };
  const created = await retryingOn503(() =>
    send(ctx.api, ctx.account.token, ({ core }) =>
      core.POST('/v1.0/webhook_endpoints', {
        body: { webhook_endpoint: { url: `${receiver.url}${path}`, event_types: ['transaction.voided'] } },
        headers,
      }),
    ),
  );
  expect(created.status, created.text).toBe(201);
  const ids = await rush(160);
  await until(`more than ${INITIAL_LANES} requests at once at ${path}`, () => receiver.peakOpen(path) > INITIAL_LANES || arrived(path, ids), 120_000);
  // The whole backlog delivered before the answers change (none lost: a claim whose sender failed
  // is released or attempted again, docs/webhooks.md "Nothing lost midway").
  await until(`160 deliveries at ${path}`, () => arrived(path, ids), 120_000);
  return created.json.webhook_endpoint.id as number;
}

/**
 * After a change of answer, with a backlog waiting: the most requests open at once among the
 * `count` (or more) attempts begun after the endpoint item was seen down to one lane, and among all
 * the requests open after that moment. The two differ by design: an attempt whose sender read the
 * lanes before the shrink was written is still sent in its old lane (at most one per old lane,
 * once: its lane's next message is read after the write, and moves); every attempt begun after the
 * write read it (the sender's Query is consistent) and obeys the one lane. Waiting for the
 * receiver's open requests to drop to one instead raced with such attempts (2 open once, in a run
 * of 2026-11-26).
 */
async function oneLaneOver(path: string, id: number, count: number): Promise<{ fresh: number; all: number; begunAfter: number }> {
  const backlog = rush(60);
  const seen = await oneLaneSeenAt(ctx.account.accountId, id, 120_000);
  const fresh = () => attemptsBegunAfter(receiver.on(path), seen);
  await until(`${count} attempts begun after ${path} was down to one lane`, () => fresh().length >= count, 120_000);
  await backlog;
  const openAfter = receiver.on(path).filter((r) => (r.closedAt ?? Number.POSITIVE_INFINITY) > seen);
  return { fresh: peakOpenAmong(fresh()), all: peakOpenAmong(openAfter), begunAfter: fresh().length };
}

describe('adaptive lanes', () => {
  it(`a fast receiver with a backlog gets more than ${INITIAL_LANES} attempts at once, at most its account's ${ACCOUNT_LANES}; answering slowly, one`, async () => {
    const id = await grow('/fast-then-slow');
    const grown = receiver.peakOpen('/fast-then-slow');
    expect(grown).toBeGreaterThan(INITIAL_LANES);
    expect(grown).toBeLessThanOrEqual(ACCOUNT_LANES);

    expect(5000).toBeGreaterThan(SLOW_ANSWER_MS);
    receiver.behave('/fast-then-slow', { status: 200, delayMs: 5000 });
    const slow = await oneLaneOver('/fast-then-slow', id, 3);
    console.log(
      `adaptive lanes: a receiver answering in 600 ms with 160 events waiting held ${grown} requests at once; answering 200 in 5 s, ` +
        `${slow.fresh} at once among the ${slow.begunAfter} attempts begun after its lanes shrank (${slow.all} with those begun before)`,
    );
    expect(slow.fresh).toBe(1);
  }, 240_000);

  it('a receiver that fails after its lanes grew falls back to one', async () => {
    const id = await grow('/fast-then-failing');
    const grown = receiver.peakOpen('/fast-then-failing');
    expect(grown).toBeGreaterThan(INITIAL_LANES);
    receiver.behave('/fast-then-failing', { status: 503, delayMs: 600 });
    const failing = await oneLaneOver('/fast-then-failing', id, 8);
    console.log(
      `adaptive lanes: ${grown} requests at once while fast; answering 503, ${failing.fresh} at once among the ${failing.begunAfter} attempts ` +
        `begun after its lanes shrank (${failing.all} with those begun before)`,
    );
    expect(failing.fresh).toBe(1);
  }, 240_000);
});
