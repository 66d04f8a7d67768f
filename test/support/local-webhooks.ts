import { afterAll, beforeAll } from 'vitest';
import { startReceiver, type Receiver } from './webhooks/receiver.ts';
import { tableNamesWithPrefix } from '../../local/dynamodb.ts';
import { accountsOfThisProcess } from './accounts.ts';
import { call } from './http.ts';
import type { LocalApi } from '../../local/server.ts';
import type { Around } from './local-api.ts';
import { bundledWorkers, sourceWorkers, startLocalWebhooks, type LocalWebhooks, type WorkerLoader } from '../../local/webhooks.ts';

/**
 * The local stack's webhook stand-ins (the stream poller and the in-process queue) on the test
 * database, with the worker handlers from the sources or, with TILLGATE_HANDLERS=bundles, from
 * the bundles `cdk synth` built; each handler wrapped by `around` when given.
 */
export async function startTestWebhooks(
  options: { visibilityMs?: number; streams?: boolean; concurrency?: Record<string, number>; around?: Around } = {},
): Promise<LocalWebhooks> {
  const load: WorkerLoader = process.env.TILLGATE_HANDLERS === 'bundles' ? bundledWorkers((await import('./bundles.ts')).freshBundles()) : sourceWorkers;
  const { around } = options;
  const loadWorker: WorkerLoader = around ? async (worker) => around(await load(worker)) : load;
  return startLocalWebhooks({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableNames: tableNamesWithPrefix('test-'),
    loadWorker,
    log: process.env.WEBHOOK_TEST_LOG ? (line) => process.stderr.write(`${line}\n`) : () => undefined,
    pollIntervalMs: 50,
    visibilityMs: options.visibilityMs ?? 1000,
    streams: options.streams ?? true,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    // Files run side by side on the same tables: each takes the events of its own accounts only.
    acceptsAccount: (accountId) => accountsOfThisProcess.has(accountId),
  });
}

/**
 * Registers a test file's hooks for the queue workers alone (no stream poller): started before the
 * file's tests, closed after. Returns a getter of the running stand-ins, for tests that send to a
 * queue themselves.
 */
export function useQueueWorkers(options: { visibilityMs?: number } = {}): () => LocalWebhooks {
  let workers: LocalWebhooks | undefined;
  beforeAll(async () => {
    workers = await startTestWebhooks({ ...options, streams: false });
  });
  afterAll(async () => {
    await workers?.close();
  });
  return () => workers!;
}

/**
 * Registers a test file's hooks for the webhook pipeline: the stand-ins above and a verifying
 * receiver on 127.0.0.1, started before the file's tests and closed after. Read `webhooks` and
 * `receiver` inside tests.
 */
export function useWebhookPipeline(options: Parameters<typeof startTestWebhooks>[0] = {}) {
  const context = {} as { webhooks: LocalWebhooks; receiver: Receiver };
  beforeAll(async () => {
    context.webhooks = await startTestWebhooks(options);
    context.receiver = await startReceiver();
  });
  afterAll(async () => {
    await context.webhooks?.close();
    await context.receiver?.close();
  });
  return context;
}

/**
 * Registers an endpoint of every event type at `path` of the pipeline's receiver, which verifies
 * its deliveries with the endpoint's secret: its id.
 */
export async function registerEndpoint(api: LocalApi, token: string, receiver: Receiver, path: string): Promise<number> {
  const created = await call(api, 'core', 'POST', '/v1.0/webhook_endpoints', { token, body: { webhook_endpoint: { url: `${receiver.url}${path}` } } });
  if (created.status !== 201) throw new Error(`endpoint not registered: ${created.status} ${created.text}`);
  receiver.secrets(path, [created.json.webhook_endpoint.secret]);
  return created.json.webhook_endpoint.id as number;
}
