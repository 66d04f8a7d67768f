import '../../support/webhooks/env.ts';
import '../../support/debug-logs.ts';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { registerEndpoint, useWebhookPipeline } from '../../support/local-webhooks.ts';

/**
 * A fan-out batch given up on: the deliveries table refuses one endpoint's new deliveries for
 * longer than the stream's retries (8, about 9 s on the local reader), so the reader gives the
 * batch up to the on-failure queue, as Lambda does. Before, nothing read that queue (in AWS; and
 * locally there was none: a log line) and the event was never delivered (one soak run lost 56
 * events' deliveries so). Now the replay worker reads the batch back from the stream and fans it
 * out again; its first try still meets the fault and is handed over again by the queue, the
 * second succeeds. The event is acknowledged (deleted from the feed) before the replay: the
 * records come from the stream, not the table, and acknowledging does not affect deliveries.
 * The test fails without the replay (no delivery, nothing received within the wait).
 */
const ctx = useLocalApi();
const pipeline = useWebhookPipeline({ visibilityMs: 500 });
afterEach(() => vi.restoreAllMocks());

describe("the fan-out's batches given up on", () => {
  it('are read back from the stream and fanned out again by the replay worker, which retries until the fault is gone', async () => {
    const path = `/replay/${process.pid}`;
    const endpointId = await registerEndpoint(ctx.api, ctx.account.token, pipeline.receiver, path);

    // The endpoint's deliveries cannot be written until the replay's second try.
    const failures = pipeline.webhooks.queues.fanOutFailures;
    const original = documents.send.bind(documents);
    let refused = 0;
    vi.spyOn(documents, 'send').mockImplementation((async (command: any, options?: unknown) => {
      if (command instanceof PutCommand && command.input.Item?.endpoint_key === `${ctx.account.accountId}#${endpointId}` && failures.received < 2) {
        refused++;
        throw Object.assign(new Error('injected: deliveries table refuses'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
      }
      return original(command, options as never);
    }) as never);

    const made = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
    expect(made.status).toBe(201);
    const events = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events'));
    const eventId = events.json.events[0].id as number;
    expect((await call(ctx.api, 'core', 'DELETE', `/v1.0/events/${eventId}`, { token: ctx.account.token })).status).toBe(200);

    const [got] = await pipeline.receiver.waitFor(path, 1, 40_000);
    expect(Number(got!.headers['webhook-id'])).toBe(eventId);
    expect(got!.verifiedWith).toHaveLength(1);
    // The stream's first try and its 8 retries, then the replay's first try.
    expect(refused).toBeGreaterThanOrEqual(10);
    expect(failures.received).toBeGreaterThanOrEqual(2);
    const deadline = Date.now() + 10_000;
    let delivery: any;
    do {
      const list = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${endpointId}/deliveries`, { token: ctx.account.token });
      delivery = list.json.deliveries[0];
      if (delivery?.status === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } while (Date.now() < deadline);
    expect(delivery).toMatchObject({ event_id: eventId, status: 'succeeded', attempts: 1 });
  });
});
