import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { LocalApi } from '../../local/server.ts';
import { startLocalWebhooks, type WorkerLoader } from '../../local/webhooks.ts';
import { percentile, row, type Row } from './report.ts';
import { createTillgate, type Tillgate } from '../../client/index.ts';

/**
 * The webhook rows of `npm run bench`, each beside a baseline of the same run:
 * - commit → arrival at a local receiver (p50, p99): a void's request sent → its delivery
 *   received (an upper bound of commit → arrival: the void's own latency is inside). Baseline:
 *   the same events seen by an integration polling the feed (GET /v1.0/events, then DELETE),
 *   at the interval the local stream poller reads the stream (100 ms).
 * - deliveries per second for a burst of voids sent 8 at a time. Baseline: the voids per second
 *   of that burst (deliveries cannot outrun the events; a ratio near 1 means they keep up).
 * - sustained load: 8 tills voiding as fast as the local stack answers, for `sustainSeconds`, to
 *   one healthy endpoint: deliveries per second against voids per second (the baseline; near 1
 *   means its backlog does not grow), and commit → first arrival p50/p99 against those of single
 *   events (the first rows): how far the lanes (functions/webhooks/lanes.ts) keep up.
 * - the same commit → arrival of a healthy endpoint while another endpoint of the account, on
 *   another origin, hangs (the attempt time-out of 15 s). Baseline: the endpoint of a control
 *   account without a hanging one, whose voids alternate with the first's (the same load).
 * The receiver verifies every delivery with `standardwebhooks`, as an integrator's would.
 */
export interface WebhookBenchOptions {
  readonly api: LocalApi;
  readonly dynamodbEndpoint: string;
  readonly tableNames: Record<string, string>;
  readonly loadWorker: WorkerLoader;
  readonly freshToken: () => Promise<string>;
  /** Events for each latency measurement. */
  readonly events: number;
  /** Voids in the throughput burst. */
  readonly burst: number;
  /** Seconds of sustained voiding by 8 tills. */
  readonly sustainSeconds: number;
  readonly log: (line: string) => void;
}

interface Receiver {
  readonly url: string;
  readonly arrivals: Map<string, number>;
  readonly server: Server;
  secret: string | undefined;
  /** Verify with any of these when `secret` is not set. */
  secrets: string[];
  failures: number;
}

async function startReceiver(hang = false): Promise<Receiver> {
  const receiver = { arrivals: new Map<string, number>(), secret: undefined as string | undefined, secrets: [] as string[], failures: 0 } as Receiver & {
    url: string;
    server: Server;
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (hang) return;
      const at = performance.now();
      const id = String(request.headers['webhook-id']);
      const body = Buffer.concat(chunks).toString('utf8');
      const verifies = (secret: string) => {
        try {
          new Webhook(secret).verify(body, request.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      };
      if (!(receiver.secret ? [receiver.secret] : receiver.secrets).some(verifies)) receiver.failures++;
      if (!receiver.arrivals.has(id)) receiver.arrivals.set(id, at);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return Object.assign(receiver, { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

const close = (server: Server) =>
  new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });

export async function measureWebhooks(options: WebhookBenchOptions): Promise<Row[]> {
  const { api, log } = options;
  const webhooks = await startLocalWebhooks({
    endpoint: options.dynamodbEndpoint,
    tableNames: options.tableNames,
    loadWorker: options.loadWorker,
    log: () => undefined,
  });
  const receiver = await startReceiver();
  const stuck = await startReceiver(true);
  /** The typed client for a token, made once; no retry: what the bench measures is each request once. */
  const clients = new Map<string, Tillgate>();
  const client = (token: string) => {
    let made = clients.get(token);
    if (!made) clients.set(token, (made = createTillgate({ coreUrl: api.urls.core, posUrl: api.urls.pos, token, retry: { retries: 0 } })));
    return made;
  };
  const register = async (token: string, url: string) => {
    const created = await client(token).core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url, event_types: ['transaction.voided'] } } });
    if (created.status !== 201 || created.data.webhook_endpoint.secret === undefined)
      throw new Error(`bench: could not register a webhook endpoint: ${created.status} ${JSON.stringify(created.error)}`);
    return created.data.webhook_endpoint.secret;
  };
  let serial = 0;
  /** One void; `retries`: after a 503 (a saturated DynamoDB Local), the same void again, as a till does, timed from the first send. */
  const voidOnce = async (token: string, retries = 0) => {
    const sent = performance.now();
    const body = { transaction: { site_id: 'bench-hooks', pos_transaction_id: `W${serial++}` } };
    let answer = await client(token).pos.POST('/v2.0/voided_transactions', { body });
    for (let retry = 0; answer.status === 503 && retry < retries; retry++) {
      await new Promise((r) => setTimeout(r, 500));
      answer = await client(token).pos.POST('/v2.0/voided_transactions', { body });
    }
    const [voided] = answer.status === 200 ? answer.data.transaction.display_messages : [];
    if (voided?.message_id !== 'transaction_voided') throw new Error(`bench: void answered ${answer.status}`);
    return { id: String(voided.message_content.event_id), sent };
  };
  const waitFor = async (ids: string[], seen: Map<string, number>, what: string, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (ids.some((id) => !seen.has(id))) {
      if (Date.now() > deadline) throw new Error(`bench: ${what}: ${ids.filter((id) => !seen.has(id)).length} of ${ids.length} never arrived`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const latencies = (sent: Map<string, number>, seen: Map<string, number>) => [...sent].map(([id, at]) => seen.get(id)! - at);
  const sequence = async (token: string, count: number) => {
    const sent = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      const { id, sent: at } = await voidOnce(token);
      sent.set(id, at);
      await new Promise((r) => setTimeout(r, 50));
    }
    return sent;
  };

  try {
    // 1. Latency, alone, beside a feed poller.
    const alone = await options.freshToken();
    receiver.secret = await register(alone, `${receiver.url}/alone`);
    const polled = new Map<string, number>();
    let polling = true;
    const poller = (async () => {
      const { core } = client(alone);
      while (polling) {
        const page = await core.GET('/v1.0/events', { params: { query: { limit: 1000 } } });
        const now = performance.now();
        for (const event of page.status === 200 ? page.data.events : []) {
          if (!polled.has(String(event.id))) polled.set(String(event.id), now);
          await core.DELETE('/v1.0/events/{id}', { params: { path: { id: event.id } } });
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // Warm-up: the first invocations of each worker and route, the first connection to the receiver.
    await waitFor([...(await sequence(alone, 10)).keys()], receiver.arrivals, 'warm-up deliveries');
    log(`  webhooks: ${options.events} events one at a time, delivered and polled …`);
    const sentAlone = await sequence(alone, options.events);
    await waitFor([...sentAlone.keys()], receiver.arrivals, 'deliveries');
    await waitFor([...sentAlone.keys()], polled, 'feed');
    polling = false;
    await poller;
    const webhookLatency = latencies(sentAlone, receiver.arrivals);
    const feedLatency = latencies(sentAlone, polled);

    // 2. Throughput.
    log(`  webhooks: a burst of ${options.burst} voids, 8 at a time …`);
    const burstToken = await options.freshToken();
    receiver.secret = await register(burstToken, `${receiver.url}/burst`);
    const burstIds: string[] = [];
    const burstStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < options.burst) {
          next++;
          burstIds.push((await voidOnce(burstToken)).id);
        }
      }),
    );
    const voidsDone = performance.now();
    await waitFor(burstIds, receiver.arrivals, 'burst deliveries');
    const lastArrival = Math.max(...burstIds.map((id) => receiver.arrivals.get(id)!));
    const deliveriesPerSecond = options.burst / ((lastArrival - burstStart) / 1000);
    const voidsPerSecond = options.burst / ((voidsDone - burstStart) / 1000);

    // 3. Sustained: 8 tills for sustainSeconds, to one endpoint of a fresh account (fresh lanes).
    log(`  webhooks: 8 tills voiding for ${options.sustainSeconds} s, one healthy endpoint …`);
    const sustainToken = await options.freshToken();
    receiver.secret = await register(sustainToken, `${receiver.url}/sustained`);
    const sentSustained = new Map<string, number>();
    const sustainStart = performance.now();
    const sustainEnd = sustainStart + options.sustainSeconds * 1000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < sustainEnd) {
          const { id, sent } = await voidOnce(sustainToken, 5);
          sentSustained.set(id, sent);
        }
      }),
    );
    const sustainVoidsDone = performance.now();
    await waitFor([...sentSustained.keys()], receiver.arrivals, 'sustained deliveries', 300_000);
    const sustainedLatency = latencies(sentSustained, receiver.arrivals);
    const sustainedLast = Math.max(...[...sentSustained.keys()].map((id) => receiver.arrivals.get(id)!));
    const sustainedDeliveriesPerSecond = sentSustained.size / ((sustainedLast - sustainStart) / 1000);
    const sustainedVoidsPerSecond = sentSustained.size / ((sustainVoidsDone - sustainStart) / 1000);

    // 4. Isolation: a hanging endpoint of the same account on another origin, beside a control
    // account whose endpoint is alone; their voids alternate, so both see the same load.
    log(`  webhooks: ${options.events} events to a healthy endpoint beside a hanging one, alternating with a control account …`);
    const shared = await options.freshToken();
    const control = await options.freshToken();
    const healthySecret = await register(shared, `${receiver.url}/beside-hanging`);
    const controlSecret = await register(control, `${receiver.url}/control`);
    receiver.secret = undefined;
    receiver.secrets = [healthySecret, controlSecret];
    await register(shared, `${stuck.url}/hang`);
    const sentShared = new Map<string, number>();
    const sentControl = new Map<string, number>();
    for (let i = 0; i < options.events; i++) {
      const beside = await voidOnce(shared);
      sentShared.set(beside.id, beside.sent);
      const alone = await voidOnce(control);
      sentControl.set(alone.id, alone.sent);
      await new Promise((r) => setTimeout(r, 50));
    }
    await waitFor([...sentShared.keys(), ...sentControl.keys()], receiver.arrivals, 'deliveries beside a hanging endpoint');
    const besideHanging = latencies(sentShared, receiver.arrivals);
    const controlAlone = latencies(sentControl, receiver.arrivals);

    if (receiver.failures > 0) throw new Error(`bench: ${receiver.failures} deliveries did not verify`);
    const p = (values: number[], q: number) => percentile(values, q);
    return [
      row(
        'webhooks: commit → arrival p50 (baseline: feed polled every 100 ms)',
        'ms',
        p(webhookLatency, 50),
        p(feedLatency, 50),
        '≤ 2000 (first attempt within 2 s)',
      ),
      row('webhooks: commit → arrival p99 (baseline: feed polled every 100 ms)', 'ms', p(webhookLatency, 99), p(feedLatency, 99), '≤ 2000'),
      row(
        'webhooks: deliveries per second, burst of voids 8 at a time (baseline: voids per second)',
        '/s',
        deliveriesPerSecond,
        voidsPerSecond,
        '≈ 1 × (keeps up)',
      ),
      row(
        `webhooks: sustained deliveries per second, 8 tills for ${options.sustainSeconds} s, one receiver (baseline: voids per second)`,
        '/s',
        sustainedDeliveriesPerSecond,
        sustainedVoidsPerSecond,
        '≈ 1 × (keeps up)',
      ),
      row(
        'webhooks: sustained commit → first arrival p50 (baseline: single events, first row)',
        'ms',
        p(sustainedLatency, 50),
        p(webhookLatency, 50),
        '≤ 2000 (first attempt within 2 s)',
      ),
      row('webhooks: sustained commit → first arrival p99 (baseline: single events)', 'ms', p(sustainedLatency, 99), p(webhookLatency, 99), '≤ 2000'),
      row(
        'webhooks: healthy endpoint p50 beside a hanging one (baseline: an account alone, same time)',
        'ms',
        p(besideHanging, 50),
        p(controlAlone, 50),
        '≤ 3000 (isolation)',
      ),
      row(
        'webhooks: healthy endpoint p99 beside a hanging one (baseline: an account alone, same time)',
        'ms',
        p(besideHanging, 99),
        p(controlAlone, 99),
        '≤ 3000 (isolation)',
      ),
    ];
  } finally {
    await webhooks.close();
    await close(receiver.server);
    await close(stuck.server);
  }
}
