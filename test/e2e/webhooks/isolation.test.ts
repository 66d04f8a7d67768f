import '../../support/webhooks/env.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { LANES_PER_ORIGIN } from '../../../functions/webhooks/delivery-queue.ts';

/**
 * Isolation as AWS runs it: the sender's pool is bounded (the event source's maximum
 * concurrency, 50 in AWS), and the deliveries queue is FIFO by the receiver's origin and lane.
 * Here the pool is cut to LANES_PER_ORIGIN + 1, so that a hanging origin taking more than its
 * lanes would leave the healthy origin no sender at all; the healthy origin's first attempts must
 * still leave within 3 s of each commit (PRODUCT.md), and the hanging origin must never hold
 * more requests open than its lanes, and one once it is failing. Attempt time-out 1.5 s,
 * retries 1,1,1 s (test/support/webhooks/env.ts).
 */
const ctx = useLocalApi();
const POOL = LANES_PER_ORIGIN + 1;
let webhooks: LocalWebhooks;
let healthy: Receiver;
let stuck: Receiver;

beforeAll(async () => {
  webhooks = await startTestWebhooks({ concurrency: { sendWebhookDeliveries: POOL } });
  healthy = await startReceiver();
  stuck = await startReceiver();
});
afterAll(async () => {
  await stuck?.close();
  await webhooks?.close();
  await healthy?.close();
});

const register = async (url: string) => {
  const created = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url, event_types: ['transaction.voided'] } } }),
  );
  expect(created.status, created.text).toBe(201);
  return created.json.webhook_endpoint as { id: number; secret: string };
};

let serial = 0;
/** Voids `count` sales 60 ms apart; the commit time of each event by its id. */
async function voids(count: number): Promise<Map<string, number>> {
  const sentAt = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const before = Date.now();
    const voided = await send(ctx.api, ctx.account.token, ({ pos }) =>
      pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: 'iso', pos_transaction_id: `T${++serial}` } } }),
    );
    expect(voided.status, voided.text).toBe(200);
    sentAt.set(String(voided.json.transaction.display_messages[0].message_content.event_id), before);
    await new Promise((r) => setTimeout(r, 60));
  }
  return sentAt;
}

/** Milliseconds from each event's commit to its first arrival at the healthy receiver. */
async function delaysOf(sentAt: Map<string, number>, path: string): Promise<number[]> {
  const deadline = Date.now() + 15_000;
  const first = () =>
    new Map(
      healthy
        .on(path)
        .filter((r) => sentAt.has(r.headers['webhook-id']!))
        .map((r) => [r.headers['webhook-id']!, r.at] as const)
        .reverse(),
    );
  while (first().size < sentAt.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  const arrived = first();
  expect(arrived.size, `${arrived.size} of ${sentAt.size} events reached the healthy endpoint`).toBe(sentAt.size);
  return [...sentAt].map(([id, at]) => arrived.get(id)! - at);
}

describe('isolation in a bounded pool of senders', () => {
  it(`a hanging origin holds at most its ${LANES_PER_ORIGIN} lanes, then one; a healthy origin's first attempts still leave within 3 s (pool of ${POOL})`, async () => {
    stuck.behave('/hang', 'hang');
    const hanging = await register(`${stuck.url}/hang`);
    await register(`${healthy.url}/ok`);

    // 1. Both healthy as far as tillgate knows: the hanging origin's events spread over its lanes.
    const first = await voids(16);
    const firstDelays = await delaysOf(first, '/ok');
    expect(Math.max(...firstDelays), JSON.stringify(firstDelays)).toBeLessThan(3000);
    expect(stuck.peakHanging()).toBeGreaterThanOrEqual(2);
    expect(stuck.peakHanging()).toBeLessThanOrEqual(LANES_PER_ORIGIN);

    // 2. Once its first attempts have timed out it is failing: every attempt to it, the backlog
    //    queued in its other lanes included, goes through one lane.
    const list = async () =>
      (await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/webhook_endpoints/{id}/deliveries', { params: { path: { id: hanging.id } } }))).json
        .deliveries as {
        attempts: number;
      }[];
    const deadline = Date.now() + 10_000;
    while (!(await list()).some((d) => d.attempts >= 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Attempts that started before the failure was noted end within one time-out.
    await new Promise((r) => setTimeout(r, 2000));
    stuck.resetPeakHanging();
    const second = await voids(16);
    const secondDelays = await delaysOf(second, '/ok');
    expect(Math.max(...secondDelays), JSON.stringify(secondDelays)).toBeLessThan(3000);
    expect(stuck.peakHanging()).toBeLessThanOrEqual(1);
    expect(stuck.on('/hang').length).toBeGreaterThan(0);
    console.log(
      `webhook isolation: pool ${POOL}; healthy first attempts p100 ${Math.max(...firstDelays)} ms (hanging origin healthy so far, ` +
        `${LANES_PER_ORIGIN} lanes), ${Math.max(...secondDelays)} ms (hanging origin failing, one lane); ${stuck.on('/hang').length} requests held by the hanging origin`,
    );
  });
});
