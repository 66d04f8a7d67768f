import '../../support/webhooks/env.ts';
import '../../support/debug-logs.ts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { captureLogs } from '../../attack/support.ts';

/**
 * On the local stack the routes and the workers run in one process, and a route's message reaches
 * its worker while the route is still running. Each invocation must still be on its own, as in
 * Lambda: the route's deadline must not follow its message into the worker (it did: the route
 * answered, its deadline aborted the sender's claim with "The invocation has already answered",
 * and the attempt left on the message's second receive, a visibility time-out later). That each
 * log line carries its own invocation's Lambda context is log-context.test.ts's.
 * The queue hands a failed message over again after 5 s here, as in `npm start`.
 */
const ctx = useLocalApi();
let webhooks: LocalWebhooks;
let receiver: Receiver;
const captured: string[] = [];

beforeAll(async () => {
  webhooks = await startTestWebhooks({ visibilityMs: 5000 });
  receiver = await startReceiver();
  captureLogs(captured);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await webhooks?.close();
  await receiver?.close();
});

const lines = () =>
  captured
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('an invocation on the local stack is on its own', () => {
  it("sends the retry route's attempt at once, and logs no DeadlineExceededError", async () => {
    const path = `/invocations/${process.pid}`;
    const created = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url: `${receiver.url}${path}` } } }),
    );
    expect(created.status, created.text).toBe(201);
    const endpoint = created.json.webhook_endpoint;
    receiver.secrets(path, [endpoint.secret]);
    expect((await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }))).status).toBe(201);
    const events = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events'));
    const eventId = events.json.events[0].id as number;
    await receiver.waitFor(path, 1);

    for (let retry = 1; retry <= 3; retry++) {
      const sent = Date.now();
      const answer = await send(ctx.api, ctx.account.token, ({ core }) =>
        core.POST('/v1.0/webhook_endpoints/{id}/deliveries/{event_id}/retry', { params: { path: { id: endpoint.id, event_id: eventId } } }),
      );
      expect(answer.status, answer.text).toBe(202);
      await receiver.waitFor(path, 1 + retry, 8000);
      expect(Date.now() - sent, `retry ${retry}`).toBeLessThan(2500);
    }

    const all = lines();
    const everything = captured.join('\n');
    expect(everything).not.toContain('DeadlineExceededError');
    expect(everything).not.toContain('webhook message failed');
    const attempts = all.filter((line) => line.message === 'webhook attempt');
    expect(attempts.length).toBeGreaterThanOrEqual(3);
  });
});
