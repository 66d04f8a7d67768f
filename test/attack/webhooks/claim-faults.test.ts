import '../../support/webhooks/env.ts';
import '../../support/webhooks/short-lease.ts';
import '../../support/debug-logs.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { registerEndpoint, useWebhookPipeline } from '../../support/local-webhooks.ts';

/**
 * The database cut off from one endpoint's items in the middle of an attempt, through the whole
 * pipeline of the local stack (a real event, the stream reader, the fan-out, the FIFO and retries
 * queues, the forwarder, the sender, a verifying receiver). The cut is injected around the SDK
 * (only the commands that name this endpoint's items fail, so the rest of the process is
 * untouched) and lasts 800 ms, long enough for the sender's best-effort release of its claim to
 * fail too. The queue hands a failed message over again after 500 ms, well inside the claim's
 * 4 s lease (short-lease.ts): the copy handed over again meets a live lease, the case that lost
 * the delivery before (`if (!delivery) return;`: acknowledged unsent, `pending` with 0 attempts
 * for ever). Each case would catch that: the delivery must end `succeeded`, the receiver must
 * have got the event.
 */
const ctx = useLocalApi();
const pipeline = useWebhookPipeline({ visibilityMs: 500 });
afterEach(() => vi.restoreAllMocks());

type Stage = 'claim' | 'record' | 'recorded';

/**
 * Cuts the database off from the endpoint's items (its delivery, the endpoint, its secrets) for
 * `ms`, starting when the sender sends its claim ('claim': the claim is taken, the reads beside it fail),
 * when it sends the record of an attempt ('record': the request went out, its record fails), or
 * when that record has been written ('recorded': what follows it fails). Once.
 */
function cutOff(accountId: number, endpointId: number, stage: Stage, ms = 800): { readonly cuts: () => number } {
  const original = documents.send.bind(documents);
  let until = 0;
  let armed = true;
  let cuts = 0;
  let claimed: Promise<unknown> = Promise.resolve();
  const touches = (input: any) => {
    const key = input?.Key ?? {};
    return key.endpoint_key === `${accountId}#${endpointId}` || (key.account_id === accountId && key.id === endpointId);
  };
  const isClaim = (input: any) => String(input?.UpdateExpression ?? '').startsWith('SET lease_until');
  const isRecord = (input: any) => String(input?.ConditionExpression ?? '').includes('attempts = :was');
  vi.spyOn(documents, 'send').mockImplementation((async (command: any, options?: unknown) => {
    const input = command?.input;
    if (touches(input) && Date.now() < until) {
      // Fails once the claim is written, not before: an aborted claim would hold no lease.
      await claimed;
      cuts++;
      throw Object.assign(new Error('injected: database cut off'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
    }
    if (armed && touches(input) && stage === 'claim' && isClaim(input)) {
      // The claim itself goes through; the reads sent beside it do not.
      armed = false;
      until = Date.now() + ms;
      const claim = original(command, options as never);
      claimed = claim.catch(() => undefined);
      return claim;
    }
    if (armed && touches(input) && stage === 'record' && isRecord(input)) {
      armed = false;
      until = Date.now() + ms;
      cuts++;
      throw Object.assign(new Error('injected: database cut off'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
    }
    const result = await original(command, options as never);
    if (armed && touches(input) && stage === 'recorded' && isRecord(input)) {
      armed = false;
      until = Date.now() + ms;
    }
    return result;
  }) as never);
  return { cuts: () => cuts };
}

async function endpointAndEvent(path: string, stage: Stage, firstStatus = 204) {
  const endpointId = await registerEndpoint(ctx.api, ctx.account.token, pipeline.receiver, path);
  pipeline.receiver.behave(path, { status: firstStatus });
  const fault = cutOff(ctx.account.accountId, endpointId, stage);
  const made = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
  expect(made.status).toBe(201);
  return { endpointId, fault };
}

/** Polls the delivery list until its one delivery is no longer pending (or 20 s pass). */
async function settled(endpointId: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const list = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${endpointId}/deliveries`, { token: ctx.account.token });
    const [delivery] = list.json.deliveries ?? [];
    if ((delivery && delivery.status !== 'pending') || Date.now() > deadline) return delivery;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the database cut off after the claim', () => {
  it('before the request: the claim is not released, the copy handed over again meets its lease, comes back after it and sends once', async () => {
    const path = `/claims/before/${process.pid}`;
    const { endpointId, fault } = await endpointAndEvent(path, 'claim');
    const delivery = await settled(endpointId);
    expect(fault.cuts()).toBeGreaterThan(0);
    // (An attempt may time out on a loaded machine and be retried: attempts ≥ 1.)
    expect(delivery).toMatchObject({ status: 'succeeded', last_response_status: 204 });
    expect(delivery.attempts).toBe(pipeline.receiver.on(path).length);
    expect(pipeline.receiver.on(path).every((r) => r.verifiedWith.length === 1)).toBe(true);
  });

  it('between the request and its record: the attempt is made again after the lease and recorded', async () => {
    const path = `/claims/record/${process.pid}`;
    const { endpointId, fault } = await endpointAndEvent(path, 'record');
    const delivery = await settled(endpointId);
    expect(fault.cuts()).toBeGreaterThan(0);
    expect(delivery).toMatchObject({ status: 'succeeded', last_response_status: 204 });
    // Sent, not recorded, sent again: at least once (receivers deduplicate on webhook-id).
    const got = pipeline.receiver.on(path);
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('after a failed attempt was recorded, before its next message: the copy handed over again sends the next', async () => {
    const path = `/claims/next/${process.pid}`;
    const { endpointId, fault } = await endpointAndEvent(path, 'recorded', 503);
    await pipeline.receiver.waitFor(path, 1);
    pipeline.receiver.behave(path, { status: 204 });
    const delivery = await settled(endpointId);
    expect(fault.cuts()).toBeGreaterThan(0);
    expect(delivery).toMatchObject({ status: 'succeeded', last_response_status: 204 });
    expect(delivery.attempts).toBeGreaterThanOrEqual(2);
    expect(pipeline.receiver.on(path).length).toBeGreaterThanOrEqual(2);
  });
});

describe('a claim whose answer was lost', () => {
  it('and that the SDK sent again is still its own: sent at once, not after the lease', async () => {
    const path = `/claims/resent/${process.pid}`;
    const endpointId = await registerEndpoint(ctx.api, ctx.account.token, pipeline.receiver, path);
    const retries = pipeline.webhooks.queues.webhookRetries.received;
    // The first claim is applied, its answer lost, and the same request sent again, as the SDK
    // does after a time-out: the second meets the lease the first took.
    const original = documents.send.bind(documents);
    let resent = 0;
    vi.spyOn(documents, 'send').mockImplementation((async (command: any, options?: unknown) => {
      const input = command?.input;
      if (!resent && input?.Key?.endpoint_key === `${ctx.account.accountId}#${endpointId}` && String(input.UpdateExpression).startsWith('SET lease_until')) {
        resent++;
        await original(command, options as never);
      }
      return original(command, options as never);
    }) as never);
    const made = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
    expect(made.status).toBe(201);
    const delivery = await settled(endpointId);
    expect(resent).toBe(1);
    expect(delivery).toMatchObject({ status: 'succeeded' });
    expect(delivery.attempts).toBe(pipeline.receiver.on(path).length);
    // Not sent back to wait out its own lease.
    expect(pipeline.webhooks.queues.webhookRetries.received).toBe(retries);
  });
});
