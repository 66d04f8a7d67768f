import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, newToken } from '../../../functions/http/tokens.ts';
import type { HostId } from '../../../functions/routes.ts';
import {
  ensureTables,
  freePort,
  localClient,
  scanAll,
  startDynamoDbLocal,
  tableEnvironment,
  tableNamesWithPrefix,
  type RunningDynamoDb,
  type TableNames,
} from '../../../local/dynamodb.ts';
import { send, type RawResponse } from '../support.ts';

/**
 * DynamoDB goes away under load and comes back, in two ways. The service runs in a process of its
 * own (serve-local.ts) and reaches this test's DynamoDB Local through a TCP proxy:
 *
 * - **network cut**: the proxy drops every connection and refuses new ones, the database itself
 *   stays healthy. Every write a client was told about must be stored exactly once with its event.
 * - **database stopped**: DynamoDB Local is stopped (SIGTERM) and started again on its data.
 *   DynamoDB Local acknowledges a write before it has committed it: stopped under load, it can
 *   lose the last write it acknowledged (measured with no tillgate code involved, by
 *   scripts/dynamodb-local-durability.ts: 1 of 25 stops with SIGTERM, 9 of 17 with SIGKILL).
 *   DynamoDB itself does not. So this scenario checks
 *   no duplicate, no record without its event or event without its record, and no loss of what
 *   was acknowledged after the restart, but not the emulator's own durability at its shutdown.
 *
 * - **database hung**: DynamoDB Local is frozen (SIGSTOP): it keeps its port, the kernel still
 *   accepts connections, and nothing answers; then it goes on (SIGCONT). Each request must get
 *   its 503 with Retry-After well inside the function timeout (10 s on the local server): the
 *   SDK's attempts time out (2 s each, 3 attempts) and the invocation deadline bounds them.
 *
 * While DynamoDB is away every answer is a 503 with Retry-After (never a 500, never a hang);
 * once it is back the same service process answers normally again.
 */
let port: number;
let proxy: Proxy;
let dataDirectory: string;
let dynamodb: RunningDynamoDb;
let names: TableNames;
let service: ChildProcess;
let urls: Record<HostId, string>;
const token = newToken();

beforeAll(async () => {
  port = await freePort();
  dataDirectory = mkdtempSync(join(tmpdir(), 'tillgate-outage-'));
  dynamodb = await startDynamoDbLocal({ port, dataDirectory });
  names = tableNamesWithPrefix('outage-');
  await ensureTables(dynamodb.endpoint, names);
  const client = localClient(dynamodb.endpoint);
  await client.send(
    new PutItemCommand({
      TableName: names.apiKeys,
      Item: {
        token_hash: { S: hashToken(token) },
        key_id: { S: 'key_outage' },
        account_id: { N: '77' },
        name: { S: 'outage test' },
        scope: { S: 'all' },
        created_at: { S: new Date().toISOString() },
      },
    }),
  );
  client.destroy();
  proxy = await startProxy(port);

  service = spawn(join('node_modules', '.bin', 'tsx'), [join('test', 'attack', 'database', 'serve-local.ts')], {
    env: { ...process.env, ...tableEnvironment(names), DYNAMODB_ENDPOINT: `http://127.0.0.1:${proxy.port}`, TOKEN_CACHE_SECONDS: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((done, fail) => {
    createInterface({ input: service.stdout! }).once('line', done);
    service.once('exit', (code) => fail(new Error(`the service exited with ${code} before it served`)));
  });
  urls = JSON.parse(firstLine);
}, 120_000);

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((done) => service.once('exit', done));
    service.kill('SIGTERM');
    await exited;
  }
  await proxy?.close();
  dynamodb?.thaw();
  await dynamodb?.stop();
  rmSync(dataDirectory, { recursive: true, force: true });
});

interface Outcome {
  /** When the request was sent; `endPhase` when its answer came. */
  readonly phase: 'before' | 'down' | 'after';
  readonly endPhase: 'before' | 'down' | 'after';
  readonly kind: 'void' | 'create';
  readonly id: string;
  readonly response: RawResponse;
  readonly ms: number;
}

const headers = ['X-Auth-Token', token, 'Content-Type', 'application/json'];
let sequence = 0;
/** Prefix of the ids of the running scenario, so each reconciles only its own records. */
let scenario = 'T';

/** Sends a new request, or the same request again as `retryOf`. */
async function oneRequest(phase: Outcome['phase'], now: () => Outcome['phase'] = () => phase, retryOf?: Outcome): Promise<Outcome> {
  const n = retryOf ? Number(retryOf.id.split('-')[1]) : ++sequence;
  const id = `${scenario}-${n}`;
  const kind = n % 2 ? 'void' : 'create';
  const started = performance.now();
  const response =
    kind === 'void'
      ? await send(urls.pos, {
          method: 'POST',
          path: '/v2.0/voided_transactions',
          headers,
          body: JSON.stringify({ transaction: { site_id: 'S', pos_transaction_id: id } }),
        })
      : await send(urls.core, {
          method: 'POST',
          path: '/v1.0/codegen',
          headers: [...headers, 'Idempotency-Key', id],
          body: JSON.stringify({ code_generator: { generation_type: 'numeric', code_length: 8, store_id: n, description: id } }),
        });
  return { phase, endPhase: now(), kind, id, response, ms: performance.now() - started };
}

/** `workers` clients sending requests back to back until `until` resolves. */
async function load(workers: number, phase: () => Outcome['phase'], until: Promise<unknown>): Promise<Outcome[]> {
  let running = true;
  void until.then(() => (running = false));
  const outcomes: Outcome[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (running) {
        const outcome = await oneRequest(phase(), phase);
        outcomes.push(outcome);
        // Clients back off on 503 (a quarter of Retry-After, to keep the test short).
        if (outcome.response.status === 503) await pause(250 * Number(outcome.response.headers['retry-after']));
      }
    }),
  );
  return outcomes;
}

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function scan(table: string): Promise<Record<string, any>[]> {
  const client = localClient(dynamodb.endpoint);
  try {
    return await scanAll(DynamoDBDocumentClient.from(client), { TableName: table });
  } finally {
    client.destroy();
  }
}

interface Proxy {
  readonly port: number;
  /** Drops every connection and refuses new ones, like a network partition. */
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy to DynamoDB Local that the test can cut and restore. */
async function startProxy(target: number): Promise<Proxy> {
  const sockets = new Set<Socket>();
  const proxyPort = await freePort();
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((done) => {
      server = createServer((incoming) => {
        const outgoing = createConnection(target, '127.0.0.1');
        for (const socket of [incoming, outgoing]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            incoming.destroy();
            outgoing.destroy();
          });
        }
        incoming.pipe(outgoing).pipe(incoming);
      });
      server.listen(proxyPort, '127.0.0.1', () => done());
    });
  const shut = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy();
      if (server) server.close(() => done());
      else done();
      server = undefined;
    });
  await listen();
  return { port: proxyPort, cut: shut, restore: listen, close: shut };
}

/** Runs the load through an outage made by `goDown` and ended by `comeBack`, and retries every 503. */
async function throughAnOutage(name: string, goDown: () => Promise<void>, comeBack: () => Promise<void>, { downMs = 3000, minDownAnswers = 7 } = {}) {
  scenario = name;
  let phase: Outcome['phase'] = 'before';
  let finish!: () => void;
  const finished = new Promise<void>((done) => (finish = done));
  const traffic = load(6, () => phase, finished);

  await pause(1500);
  phase = 'down';
  await goDown();
  await pause(downMs);
  await comeBack();
  phase = 'after';
  await pause(4000);
  finish();
  const outcomes = await traffic;

  const byPhase = (p: Outcome['phase']) => outcomes.filter((o) => o.phase === p);
  const statuses = (list: Outcome[]) => [...new Set(list.map((o) => o.response.status))].sort();
  console.log(
    `outage (${name}): ${outcomes.length} requests; before ${JSON.stringify(statuses(byPhase('before')))}, ` +
      `down ${JSON.stringify(statuses(byPhase('down')))} (${byPhase('down').length}), after ${JSON.stringify(statuses(byPhase('after')))}`,
  );

  // Never a 500 or anything but 2xx/503; never a hang (timeouts are 1 s to connect, 3 s per request).
  for (const o of outcomes) {
    expect([200, 201, 503], `${o.phase}→${o.endPhase} ${o.response.status} ${o.response.text}`).toContain(o.response.status);
    expect(o.ms, `${o.phase}→${o.endPhase} took ${o.ms} ms`).toBeLessThan(12_000);
    if (o.response.status === 503) {
      expect(o.response.headers['retry-after']).toBe('1');
      expect(o.response.headers['x-content-type-options']).toBe('nosniff');
    }
  }
  const settledBefore = byPhase('before').filter((o) => o.endPhase === 'before');
  expect(
    settledBefore.filter((o) => o.response.status >= 300).map((o) => o.response.text),
    'failures before the outage',
  ).toEqual([]);
  // While down, requests kept being answered, and (after in-flight ones) only with 503.
  const down = byPhase('down');
  expect(down.filter((o) => o.response.status === 503).length, 'answers while down').toBeGreaterThanOrEqual(minDownAnswers);
  // Recovered without a restart of the service: the tail of the run is all successes.
  const after = byPhase('after');
  const tail = after.slice(-Math.min(12, Math.floor(after.length / 3)));
  expect(tail.length).toBeGreaterThan(0);
  expect(
    tail.every((o) => o.response.status < 300),
    JSON.stringify(tail.map((o) => o.response.status)),
  ).toBe(true);
  expect(service.exitCode).toBeNull();

  // Clients retry what got 503: every write then converges to exactly one record and one event.
  // The same six clients retry, each one request at a time, as they sent them: a herd of
  // hundreds of simultaneous retries would measure the emulator's queue, not the service (with
  // time-outs that throw, a call DynamoDB Local leaves waiting for seconds rightly answers 503).
  const unanswered = outcomes.filter((o) => o.response.status === 503);
  const retries: Outcome[] = [];
  const queue = [...unanswered];
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      for (let o = queue.shift(); o; o = queue.shift()) retries.push(await oneRequest('after', undefined, o));
    }),
  );
  expect(retries.map((r) => r.response.status).filter((status) => status >= 300)).toEqual([]);

  const mine = <T extends Record<string, any>>(items: T[], field: string) => items.filter((item) => String(item[field]).startsWith(`${name}-`));
  const [allVoids, allGenerators, events] = await Promise.all([scan(names.posTransactions), scan(names.codeGenerators), scan(names.events)]);
  const voids = mine(allVoids, 'pos_transaction_id');
  const generators = mine(allGenerators, 'description');
  const voidEvents = events.filter((e) => e.type === 'transaction.voided' && String(e.resource_id).startsWith(`S/${name}-`));
  const generatorIds = new Set(generators.map((g) => g.id));
  const generatorEvents = events.filter((e) => e.type === 'code_generator.created' && generatorIds.has(Number(e.resource_id)));

  // No duplicates, and no record without its event or event without its record.
  const voidIds = voids.map((v) => v.pos_transaction_id);
  expect(new Set(voidIds).size, 'duplicate voids').toBe(voidIds.length);
  expect(voidEvents.map((e) => e.resource_id).sort(), 'one event per void').toEqual(voidIds.map((id) => `S/${id}`).sort());
  expect(new Set(generators.map((g) => g.description)).size, 'one generator per Idempotency-Key').toBe(generators.length);
  expect(generatorEvents.map((e) => Number(e.resource_id)).sort(), 'one event per generator').toEqual([...generatorIds].sort());

  return { outcomes, retries, voids, generators };
}

/** Requests a client was told succeeded (first answer or retry) whose record is not in the table. */
function missingRecords(
  outcomes: Outcome[],
  retries: Outcome[],
  voids: Record<string, any>[],
  generators: Record<string, any>[],
  counted: (o: Outcome) => boolean,
) {
  const stored = new Set([...voids.map((v) => v.pos_transaction_id), ...generators.map((g) => g.description)]);
  const retryOf = (o: Outcome) => retries.find((r) => r.id === o.id);
  return outcomes
    .filter((o) => counted(retryOf(o) ?? o) && !stored.has(o.id))
    .map((o) => `${o.kind} ${o.id} ${o.phase}→${o.endPhase} ${o.response.status} (retry ${retryOf(o)?.response.status}) ${o.response.text}`);
}

describe('DynamoDB away under load', () => {
  it('network cut: 503 with Retry-After while away, recovers by itself, and loses or duplicates nothing', async () => {
    const { outcomes, retries, voids, generators } = await throughAnOutage(
      'cut',
      () => proxy.cut(),
      () => proxy.restore(),
    );
    expect(
      missingRecords(outcomes, retries, voids, generators, () => true),
      'writes clients were told about, missing',
    ).toEqual([]);
    expect(voids.length + generators.length).toBe(outcomes.length);
  }, 120_000);

  it('database hung (frozen, connections accepted, no answer): 503 with Retry-After well inside the function timeout, recovers by itself, loses nothing', async () => {
    const { outcomes, retries, voids, generators } = await throughAnOutage(
      'hung',
      async () => dynamodb.freeze(),
      async () => dynamodb.thaw(),
      // A hung request takes seconds to get its 503: the six clients get one or two each.
      { downMs: 14_000, minDownAnswers: 6 },
    );
    // Answers to requests sent while the database was frozen: 503s, each well inside 10 s.
    const whileHung = outcomes.filter((o) => o.phase === 'down' && o.endPhase === 'down');
    const times = whileHung.map((o) => o.ms).sort((a, b) => a - b);
    console.log(
      `outage (hung): ${times.length} answers while frozen, all ${JSON.stringify([...new Set(whileHung.map((o) => o.response.status))])}; ` +
        `time to 503 ms: min ${Math.round(times[0]!)}, median ${Math.round(times[Math.floor(times.length / 2)]!)}, max ${Math.round(times.at(-1)!)}`,
    );
    expect(whileHung.length).toBeGreaterThanOrEqual(6);
    for (const o of whileHung) {
      expect(o.response.status, o.response.text).toBe(503);
      // At least one attempt's time-out (fewer attempts once the SDK's shared retry quota is spent),
      // at most 3 attempts of 2 s and the back-off: well before the deadline (9 s) and the 10 s timeout.
      expect(o.ms, `${o.kind} ${o.id}`).toBeGreaterThan(1900);
      expect(o.ms, `${o.kind} ${o.id}`).toBeLessThan(8000);
    }
    // Nothing was lost: every write a client was told about, first or on retry, is stored once.
    expect(
      missingRecords(outcomes, retries, voids, generators, () => true),
      'writes clients were told about, missing',
    ).toEqual([]);
    expect(voids.length + generators.length).toBe(outcomes.length);
  }, 120_000);

  it('database stopped and restarted: 503 with Retry-After while down, recovers by itself, no duplicate, no orphan', async () => {
    const { outcomes, retries, voids, generators } = await throughAnOutage(
      'stop',
      () => dynamodb.stop(),
      async () => {
        dynamodb = await startDynamoDbLocal({ port, dataDirectory });
      },
    );
    // What was acknowledged after the restart is all there (the emulator is not stopped again).
    expect(
      missingRecords(outcomes, retries, voids, generators, (o) => o.phase === 'after'),
      'writes acknowledged after the restart, missing',
    ).toEqual([]);
  }, 120_000);
});
