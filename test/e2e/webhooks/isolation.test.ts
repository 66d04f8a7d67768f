// A claim's lease of 4 s (above the 1.5 s time-out): on a saturated machine a sender can fail
// after its claim (DynamoDB Local timing out), and the copy handed back waits out the lease (60 s by
// default: one healthy event of 16 missed the 30 s wait so, at a load average of 21).
import '../../support/webhooks/short-lease.ts';
import '../../support/webhooks/env.ts';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { send } from '../../support/client.ts';
import { newAccount } from '../../support/accounts.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { attemptsBegunAfter, peakOpenAmong, startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import { oneLaneSeenAt, retryingOn503, watchPoolWaits } from '../../support/webhooks/lanes.ts';
import { ACCOUNT_LANES, ATTEMPT_TIMEOUT_MS, INITIAL_LANES, SLOW_ANSWER_MS } from '../../../functions/webhooks/lanes.ts';

/**
 * Isolation as AWS runs it: the sender's pool is bounded (the event source's maximum
 * concurrency, 200 in AWS), and the deliveries queue is FIFO by account, receiver's origin and
 * lane. Here the pool is cut to a few senders, so that origins holding more senders than their
 * lanes would leave the others none. Attempt time-out 1.5 s, a slow answer one after 900 ms, an
 * account's lanes at most 6, retries 1,1,1 s (test/support/webhooks/env.ts). Each test runs its
 * own pool and receivers, so no backlog of one test holds senders in the next.
 *
 * What is asserted of the measured account's first attempts, and why not "within 3 s of the
 * commit" (PRODUCT.md) as a bound: a first attempt's delay is the route and the stream (the
 * void's transaction, the stream poll, the fan-out), then the deliveries queue (a free sender,
 * and its own lane's earlier messages), then the sender's own claim, reads and request. Another
 * origin or account can lengthen it in two ways only: by holding the senders (the pool), or by
 * queueing in the same FIFO group. On the shared 2-core machine at a load average of 12 to 17,
 * the rest alone took up to 7.6 s from the commit and 3.8 s from the queue, with neither (a run
 * of 2026-11-26: docs/webhooks.md "Isolation"), so a bound in seconds measured the machine and
 * failed on it. Asserted instead, for each first attempt:
 * - it never waited for a sender held by others (pool wait 0: local/sqs-queue.ts counts the time
 *   a message was free to go while every sender was busy). Each test's pool is at least the lanes
 *   its accounts may hold together, as AWS's 200 is at least five accounts' 40, so with lanes per
 *   account and origin, the cap per account and one lane for a slow origin nothing else holds
 *   its sender; before them, other origins' lanes filled the pool;
 * - the FIFO groups it went through carried no other endpoint's messages (before the account was
 *   part of the group, a shared origin's lanes carried both accounts').
 * The delays from the commit and from the queue are printed, for the figures.
 */
const ctx = useLocalApi();
const POOL = 8;
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  // The pools first (they wait for their running attempts), then the receivers.
  for (const one of opened.splice(0).reverse()) await one.close();
});
/** A pool of `size` senders, and what held up each first attempt in it. */
async function pool(size = POOL) {
  const webhooks = await startTestWebhooks({ concurrency: { sendWebhookDeliveries: size } });
  opened.push(webhooks);
  return { webhooks, ...watchPoolWaits(webhooks) };
}
async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  opened.unshift(started);
  return started;
}

type Account = { token: string };
const register = async (account: Account, url: string) => {
  const headers = { 'Idempotency-Key': randomUUID() };
  const created = await retryingOn503(() =>
    send(ctx.api, account.token, ({ core }) =>
      core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url, event_types: ['transaction.voided'] } }, headers }),
    ),
  );
  expect(created.status, created.text).toBe(201);
  return created.json.webhook_endpoint as { id: number; secret: string };
};

let serial = 0;
/** Voids `count` sales `gapMs` apart; the commit time of each event by its id. */
async function voids(account: Account, count: number, gapMs = 60): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const before = Date.now();
    const body = { transaction: { site_id: 'iso', pos_transaction_id: `T${++serial}` } };
    const voided = await retryingOn503(() => send(ctx.api, account.token, ({ pos }) => pos.POST('/v2.0/voided_transactions', { body })));
    expect(voided.status, voided.text).toBe(200);
    sentAt.set(String(voided.json.transaction.display_messages[0].message_content.event_id), before);
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
  }
  return sentAt;
}

/** Each event's first arrival at `path` of `at` (epoch milliseconds), once all have arrived. */
async function arrivals(sentAt: Map<string, number>, at: Receiver, path: string, timeoutMs = 30_000): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  const first = () =>
    new Map(
      at
        .on(path)
        .filter((r) => sentAt.has(r.headers['webhook-id']!))
        .map((r) => [r.headers['webhook-id']!, r.at] as const)
        .reverse(),
    );
  while (first().size < sentAt.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  const arrived = first();
  expect(arrived.size, `${arrived.size} of ${sentAt.size} events reached ${path}`).toBe(sentAt.size);
  return arrived;
}

/**
 * The first attempts of `sentAt`'s events to `endpointId` (at `path` of `at`), judged as the file's
 * comment says: none waited for a sender held by others (pool wait 0), and the FIFO groups they
 * went through carried no other endpoint's messages. Answers the figures to print: commit →
 * arrival and queued → arrival at most.
 */
async function isolated(
  sentAt: Map<string, number>,
  at: Receiver,
  path: string,
  endpointId: number,
  watched: Awaited<ReturnType<typeof pool>>,
): Promise<{ commitToArrival: number; queuedToArrival: number }> {
  const arrived = await arrivals(sentAt, at, path);
  const rows = [...sentAt].map(([id, sent]) => ({
    id,
    commitToArrival: arrived.get(id)! - sent,
    queuedToArrival: arrived.get(id)! - (watched.queuedAt(endpointId, id) ?? Number.NaN),
    poolWait: watched.poolWaitOf(endpointId, id),
  }));
  const shown = JSON.stringify(rows);
  expect(
    rows.map((row) => row.poolWait),
    `a first attempt waited for a sender held by others: ${shown}`,
  ).toEqual(rows.map(() => 0));
  expect(watched.sharingGroups(endpointId), 'endpoints whose messages shared a FIFO group with the measured one').toEqual([]);
  return { commitToArrival: Math.max(...rows.map((row) => row.commitToArrival)), queuedToArrival: Math.max(...rows.map((row) => row.queuedToArrival)) };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('isolation in a bounded pool of senders', () => {
  it(`a hanging origin holds at most its ${INITIAL_LANES} initial lanes, then one; a healthy origin's first attempts are never held up by it (pool of ${POOL})`, async () => {
    const watched = await pool();
    const healthy = await receiver();
    const stuck = await receiver();
    stuck.behave('/hang', 'hang');
    const ok = await register(ctx.account, `${healthy.url}/ok`);
    await arrivals(await voids(ctx.account, 1), healthy, '/ok'); // warm-up: the workers' first invocations
    const hanging = await register(ctx.account, `${stuck.url}/hang`);

    // 1. A new endpoint has its initial lanes (its share of the account's 6: 3 here): the hanging
    //    origin's events spread over them, 3 senders held for a time-out each, 5 left for the rest.
    // 4 a second: what the healthy origin's lanes carry even on a loaded 2-core machine (this tests isolation, not throughput).
    const first = await isolated(await voids(ctx.account, 16, 250), healthy, '/ok', ok.id, watched);
    expect(stuck.peakHanging()).toBeLessThanOrEqual(INITIAL_LANES);

    // 2. Once its first attempt has timed out it is failing, with one lane: every attempt begun
    //    after that was written, the backlog queued in its other lanes included, goes through it.
    //    An attempt begun before may still hang in its old lane (at most one per lane, once).
    const oneLane = await oneLaneSeenAt(ctx.account.accountId, hanging.id);
    const second = await isolated(await voids(ctx.account, 16, 250), healthy, '/ok', ok.id, watched);
    const after = attemptsBegunAfter(stuck.on('/hang'), oneLane);
    expect(after.length, 'attempts to the hanging origin begun after it was down to one lane').toBeGreaterThan(1);
    expect(peakOpenAmong(after)).toBe(1);
    console.log(
      `webhook isolation: pool ${POOL}; healthy first attempts at most ${first.commitToArrival} ms from the commit, ${first.queuedToArrival} ms from the queue ` +
        `(hanging origin new, ${INITIAL_LANES} lanes), ${second.commitToArrival} / ${second.queuedToArrival} ms (hanging origin failing), none waited for a sender; ` +
        `${stuck.on('/hang').length} requests held by the hanging origin, at most ${stuck.peakHanging()} at once, ${peakOpenAmong(after)} of the ${after.length} begun once it had one lane`,
    );
  }, 120_000);

  // Two greedy accounts may hold 2 × 6 lanes, the measured one its initial 4: a pool of 16, as in
  // AWS four accounts at their cap of 40 leave 40 of the 200 senders.
  const SLOW_POOL = 2 * ACCOUNT_LANES + INITIAL_LANES;
  it(`slow 200s: two accounts with three endpoints each that answer 200 just under the time-out do not hold up a third account's first attempts (pool of ${SLOW_POOL})`, async () => {
    const watched = await pool(SLOW_POOL);
    // Each slow endpoint on an origin of its own: 6 origins. Before the lanes were slow-aware and
    // per account, each of them had 4 lanes, 24 groups with a backlog for 16 senders.
    const slowAnswerMs = ATTEMPT_TIMEOUT_MS - 300;
    expect(slowAnswerMs).toBeGreaterThan(SLOW_ANSWER_MS);
    const greedy = [await newAccount(), await newAccount()];
    const slow: { receiver: Receiver; account: { accountId: number }; id: number }[] = [];
    for (const account of greedy) {
      for (let i = 0; i < 3; i++) {
        const one = await receiver();
        one.behave('/slow', { status: 200, delayMs: slowAnswerMs });
        slow.push({ receiver: one, account, id: (await register(account, `${one.url}/slow`)).id });
      }
    }
    const healthy = await receiver();
    const ok = await register(ctx.account, `${healthy.url}/ok`);
    const alone = await isolated(await voids(ctx.account, 4, 100), healthy, '/ok', ok.id, watched);

    // Backlogs of 16 deliveries per slow endpoint (96 in all), then the third account's voids at
    // once, while the slow origins still hold their first lanes and then fall back to one.
    // When each slow origin was seen down to one lane, watched from now on, side by side.
    const oneLane = Promise.all(slow.map(({ account, id }) => oneLaneSeenAt(account.accountId, id)));
    await Promise.all(greedy.map((account) => voids(account, 16, 0)));
    const beside = await isolated(await voids(ctx.account, 8, 150), healthy, '/ok', ok.id, watched);
    // Each slow origin: one request at a time among the attempts begun once its slow answer was written.
    const seen = await oneLane;
    const fresh = () => slow.map(({ receiver: one }, index) => attemptsBegunAfter(one.on('/slow'), seen[index]!));
    await until('two attempts begun after each slow origin was down to one lane ended', async () =>
      fresh().every((requests) => requests.filter((r) => r.closedAt !== undefined).length >= 2),
    );
    const peaks = fresh().map(peakOpenAmong);
    console.log(
      `webhook isolation, slow 200s (${slowAnswerMs} ms, slow above ${SLOW_ANSWER_MS} ms): third account's first attempts at most ${alone.commitToArrival} ms ` +
        `from the commit alone, ${beside.commitToArrival} ms (${beside.queuedToArrival} ms from the queue) beside 6 slow origins of 2 accounts with 96 deliveries queued, ` +
        `none waited for a sender; most open at one slow origin ${Math.max(...slow.map(({ receiver: one }) => one.peakOpen('/slow')))}, once it had one lane ${Math.max(...peaks)}`,
    );
    expect(peaks).toEqual(slow.map(() => 1));
  }, 120_000);

  it("two accounts whose endpoints share an origin do not wait on each other's backlog", async () => {
    const watched = await pool();
    const shared = await receiver();
    const busy = await newAccount();
    // A receiver that takes 200 ms a request (neither fast nor slow: its lanes stay as they are).
    shared.behave('/busy', { status: 204, delayMs: 200 });
    for (let i = 0; i < 10; i++) await register(busy, `${shared.url}/busy`);
    const quiet = await register(ctx.account, `${shared.url}/quiet`);
    const alone = await isolated(await voids(ctx.account, 4, 100), shared, '/quiet', quiet.id, watched);

    // 30 voids × 10 endpoints: 300 deliveries queued to the shared origin.
    await voids(busy, 30, 0);
    await until('the backlog is being sent', async () => shared.on('/busy').length > 0);
    const backlog = 300 - shared.on('/busy').length;
    const beside = await isolated(await voids(ctx.account, 8, 150), shared, '/quiet', quiet.id, watched);
    console.log(
      `webhook isolation, shared origin: the quiet account's first attempts at most ${alone.commitToArrival} ms from the commit alone, ${beside.commitToArrival} ms ` +
        `(${beside.queuedToArrival} ms from the queue) beside the other account's backlog (${backlog} of 300 still to send when they started, 200 ms a request, ` +
        `at most ${shared.peakOpen('/busy')} at once), none waited for a sender`,
    );
    expect(backlog, 'the backlog was there when the quiet account was measured').toBeGreaterThan(200);
  }, 120_000);
});
