import '../../support/webhooks/env.ts';
import '../../support/debug-logs.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { startTestApi, type Around } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import type { LocalApi } from '../../../local/server.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';

/**
 * On the local stack the routes and the webhook workers run side by side in one process, and
 * with them the one Powertools logger of their modules (or of each bundle). Every log line an
 * invocation writes must still carry that invocation's own Lambda context, as in Lambda: its
 * function_name and its function_request_id (an issue report counted 77 of 873 local request
 * lines that named a worker's function and request id instead).
 * Each handler is wrapped where the local stack invokes it, and the wrapper keeps the
 * invocation's context in an AsyncLocalStorage of this file: a line written to stdout or stderr
 * is attributed to the invocation that wrote it, whatever the line itself says.
 */
interface Invocation {
  readonly kind: 'route' | 'worker';
  readonly functionName: string;
  readonly requestId: string;
}
const current = new AsyncLocalStorage<Invocation>();
const running = { route: 0, worker: 0 };
/** Invocations that started while one of the other kind was running. */
let overlapping = 0;

const around =
  (kind: Invocation['kind']): Around =>
  (handler) =>
  async (event, context) => {
    if (running[kind === 'route' ? 'worker' : 'route'] > 0) overlapping++;
    running[kind]++;
    try {
      return await current.run({ kind, functionName: context.functionName, requestId: context.awsRequestId }, () => handler(event, context));
    } finally {
      running[kind]--;
    }
  };

const written: { invocation: Invocation | undefined; text: string }[] = [];
let api: LocalApi;
let webhooks: LocalWebhooks;
let receiver: Receiver;

beforeAll(async () => {
  api = await startTestApi(around('route'));
  webhooks = await startTestWebhooks({ around: around('worker') });
  receiver = await startReceiver();
  const capture = (chunk: unknown, ...rest: unknown[]) => {
    written.push({ invocation: current.getStore(), text: String(chunk) });
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture as never);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture as never);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await webhooks?.close();
  await api?.close();
  await receiver?.close();
});

describe('log lines on the local stack', () => {
  it('carry the function_name and function_request_id of the invocation that wrote them, with routes and workers running at once', async () => {
    const account = await newAccount();
    const path = `/log-context/${process.pid}`;
    const created = await send(api, account.token, ({ core }) =>
      core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url: `${receiver.url}${path}` } } }),
    );
    expect(created.status, created.text).toBe(201);

    // Each generator made is an event, so one fan-out and one sender invocation, which run while
    // the next requests are served; reads go on until every event has been delivered.
    const GENERATORS = 12;
    const creations = Array.from({ length: GENERATORS }, async () => {
      const answer = await send(api, account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
      expect(answer.status, answer.text).toBe(201);
    });
    const deadline = Date.now() + 20_000;
    const reads = (async () => {
      while (receiver.on(path).length < GENERATORS && Date.now() < deadline) {
        const answers = await Promise.all(Array.from({ length: 6 }, () => send(api, account.token, ({ core }) => core.GET('/v1.0/events'))));
        for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      }
    })();
    await Promise.all([...creations, reads]);
    await receiver.waitFor(path, GENERATORS, 20_000);

    const parsed = () =>
      written.flatMap(({ invocation, text }) =>
        text
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => ({ invocation, line: JSON.parse(line) as Record<string, unknown> })),
      );
    // The sender logs its attempt once the receiver has answered.
    await vi.waitFor(() => expect(parsed().filter((entry) => entry.line.message === 'webhook attempt').length).toBeGreaterThanOrEqual(GENERATORS), {
      timeout: 10_000,
    });
    const lines = parsed();
    const ofInvocations = lines.filter((entry) => entry.invocation !== undefined);
    // Both kinds logged, and ran at the same time: otherwise there was nothing to mix up.
    expect(ofInvocations.filter((entry) => entry.line.message === 'request').length).toBeGreaterThan(GENERATORS);
    expect(ofInvocations.filter((entry) => entry.line.message === 'webhook attempt').length).toBeGreaterThanOrEqual(GENERATORS);
    expect(overlapping).toBeGreaterThan(0);

    const misattributed = ofInvocations
      .filter(({ invocation, line }) => line.function_name !== invocation!.functionName || line.function_request_id !== invocation!.requestId)
      .map(({ invocation, line }) => ({
        message: line.message,
        written_by: `${invocation!.functionName} ${invocation!.requestId}`,
        says: `${String(line.function_name)} ${String(line.function_request_id)}`,
      }));
    expect(misattributed, `${misattributed.length} of ${ofInvocations.length} lines`).toEqual([]);
    // And no line written outside every invocation carries one's context.
    expect(lines.filter((entry) => entry.invocation === undefined && entry.line.function_name !== undefined).map((entry) => entry.line)).toEqual([]);
  });
});
