import '../../support/webhooks/env.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { send } from '../../support/client.ts';
import { newAccount } from '../../support/accounts.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { ATTEMPT_TIMEOUT_MS, INITIAL_LANES, SLOW_ANSWER_MS } from '../../../functions/webhooks/lanes.ts';

/**
 * Isolation as AWS runs it: the sender's pool is bounded (the event source's maximum
 * concurrency, 200 in AWS), and the deliveries queue is FIFO by account, receiver's origin and
 * lane. Here the pool is cut to POOL, so that origins holding more senders than their lanes
 * would leave the others none; the first attempts of the others must still leave within 3 s of
 * each commit (PRODUCT.md). Attempt time-out 1.5 s, a slow answer one after 900 ms, an account's
 * lanes at most 6, retries 1,1,1 s (test/support/webhooks/env.ts). Each test runs its own pool and receivers, so
 * no backlog of one test holds senders in the next.
 */
const ctx = useLocalApi();
const POOL = 8;
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  // The pools first (they wait for their running attempts), then the receivers.
  for (const one of opened.splice(0).reverse()) await one.close();
});
async function pool(size = POOL): Promise<LocalWebhooks> {
  const webhooks = await startTestWebhooks({ concurrency: { sendWebhookDeliveries: size } });
  opened.push(webhooks);
  return webhooks;
}
async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  opened.unshift(started);
  return started;
}

type Account = { token: string };
const register = async (account: Account, url: string) => {
  const created = await send(ctx.api, account.token, ({ core }) =>
    core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url, event_types: ['transaction.voided'] } } }),
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
    const voided = await send(ctx.api, account.token, ({ pos }) =>
      pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: 'iso', pos_transaction_id: `T${++serial}` } } }),
    );
    expect(voided.status, voided.text).toBe(200);
    sentAt.set(String(voided.json.transaction.display_messages[0].message_content.event_id), before);
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
  }
  return sentAt;
}

/** Milliseconds from each event's commit to its first arrival at `path` of `at`. */
async function delaysOf(sentAt: Map<string, number>, at: Receiver, path: string, timeoutMs = 15_000): Promise<number[]> {
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
  return [...sentAt].map(([id, time]) => arrived.get(id)! - time);
}

const deliveriesOf = async (account: Account, id: number) =>
  (await send(ctx.api, account.token, ({ core }) => core.GET('/v1.0/webhook_endpoints/{id}/deliveries', { params: { path: { id } } }))).json.deliveries as {
    attempts: number;
  }[];

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('isolation in a bounded pool of senders', () => {
  it(`a hanging origin holds at most its ${INITIAL_LANES} initial lanes, then one; a healthy origin's first attempts still leave within 3 s (pool of ${POOL})`, async () => {
    await pool();
    const healthy = await receiver();
    const stuck = await receiver();
    stuck.behave('/hang', 'hang');
    await register(ctx.account, `${healthy.url}/ok`);
    await delaysOf(await voids(ctx.account, 1), healthy, '/ok'); // warm-up: the workers' first invocations
    const hanging = await register(ctx.account, `${stuck.url}/hang`);

    // 1. A new endpoint has its initial lanes: the hanging origin's events spread over them.
    // 4 a second: what the healthy origin's lanes carry even on a loaded 2-core machine (this tests isolation, not throughput).
    const first = await voids(ctx.account, 16, 250);
    const firstDelays = await delaysOf(first, healthy, '/ok');
    expect(Math.max(...firstDelays), JSON.stringify(firstDelays)).toBeLessThan(3000);
    expect(stuck.peakHanging()).toBeLessThanOrEqual(INITIAL_LANES);

    // 2. Once its first attempts have timed out it is failing: every attempt to it, the backlog
    //    queued in its other lanes included, goes through one lane.
    await until('an attempt to the hanging endpoint recorded', async () => (await deliveriesOf(ctx.account, hanging.id)).some((d) => d.attempts >= 1));
    await until('the attempts started before the failure was noted ended', async () => {
      stuck.resetPeakHanging();
      return stuck.peakHanging() <= 1;
    });
    const second = await voids(ctx.account, 16, 250);
    const secondDelays = await delaysOf(second, healthy, '/ok');
    expect(Math.max(...secondDelays), JSON.stringify(secondDelays)).toBeLessThan(3000);
    expect(stuck.peakHanging()).toBe(1);
    console.log(
      `webhook isolation: pool ${POOL}; healthy first attempts p100 ${Math.max(...firstDelays)} ms (hanging origin new, ${INITIAL_LANES} lanes), ` +
        `${Math.max(...secondDelays)} ms (hanging origin failing); ${stuck.on('/hang').length} requests held by the hanging origin, at most 1 at once`,
    );
  });

  it(`slow 200s: two accounts with three endpoints each that answer 200 just under the time-out do not hold up a third account's first attempts (pool of ${POOL})`, async () => {
    await pool();
    // Each slow endpoint on an origin of its own: 6 origins. Before the lanes were slow-aware and
    // per account, each of them had 4 lanes, 24 groups with a backlog for 8 senders.
    const slowAnswerMs = ATTEMPT_TIMEOUT_MS - 300;
    expect(slowAnswerMs).toBeGreaterThan(SLOW_ANSWER_MS);
    const greedy = [await newAccount(), await newAccount()];
    const slow: Receiver[] = [];
    const slowEndpoints: [Account, number][] = [];
    for (const account of greedy) {
      for (let i = 0; i < 3; i++) {
        const one = await receiver();
        one.behave('/slow', { status: 200, delayMs: slowAnswerMs });
        slowEndpoints.push([account, (await register(account, `${one.url}/slow`)).id]);
        slow.push(one);
      }
    }
    const healthy = await receiver();
    await register(ctx.account, `${healthy.url}/ok`);
    const alone = await delaysOf(await voids(ctx.account, 4, 100), healthy, '/ok');

    // Backlogs of 16 deliveries per slow endpoint (96 in all), then the third account's voids while
    // they drain, once each slow origin has answered (slowly) once: from then on it has one lane.
    await Promise.all(greedy.map((account) => voids(account, 16, 0)));
    const answered = async ([account, id]: [Account, number]) => (await deliveriesOf(account, id)).some((d) => d.attempts >= 1);
    await until('every slow origin answered once', async () => (await Promise.all(slowEndpoints.map(answered))).every(Boolean));
    await until('the attempts started before were answered', async () => {
      for (const one of slow) one.resetPeakOpen('/slow');
      return slow.every((one) => one.peakOpen('/slow') <= 1);
    });
    const beside = await delaysOf(await voids(ctx.account, 8, 150), healthy, '/ok');
    const peak = Math.max(...slow.map((one) => one.peakOpen('/slow')));
    console.log(
      `webhook isolation, slow 200s (${slowAnswerMs} ms, slow above ${SLOW_ANSWER_MS} ms): third account's first attempts max ${Math.max(...alone)} ms alone, ` +
        `${Math.max(...beside)} ms beside 6 slow origins of 2 accounts with 96 deliveries queued; most open at one slow origin ${peak}`,
    );
    expect(Math.max(...beside), JSON.stringify(beside)).toBeLessThan(3000);
    // A slow origin holds one sender.
    expect(peak).toBe(1);
  });

  it("two accounts whose endpoints share an origin do not wait on each other's backlog", async () => {
    await pool();
    const shared = await receiver();
    const busy = await newAccount();
    // A receiver that takes 200 ms a request (neither fast nor slow: its lanes stay as they are).
    shared.behave('/busy', { status: 204, delayMs: 200 });
    for (let i = 0; i < 10; i++) await register(busy, `${shared.url}/busy`);
    await register(ctx.account, `${shared.url}/quiet`);
    const alone = await delaysOf(await voids(ctx.account, 4, 100), shared, '/quiet');

    // 30 voids × 10 endpoints: 300 deliveries queued to the shared origin.
    await voids(busy, 30, 0);
    await until('the backlog is being sent', async () => shared.on('/busy').length > 0);
    const backlog = 300 - shared.on('/busy').length;
    const beside = await delaysOf(await voids(ctx.account, 8, 150), shared, '/quiet');
    console.log(
      `webhook isolation, shared origin: the quiet account's first attempts max ${Math.max(...alone)} ms alone, ${Math.max(...beside)} ms beside the ` +
        `other account's backlog (${backlog} of 300 still to send when they started, 200 ms a request, at most ${shared.peakOpen('/busy')} at once)`,
    );
    expect(backlog, 'the backlog was there when the quiet account was measured').toBeGreaterThan(200);
    expect(Math.max(...beside), JSON.stringify(beside)).toBeLessThan(3000);
  });
});
