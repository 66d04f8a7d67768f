import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, newToken } from '../../functions/commons/auth.ts';
import type { HostId } from '../../functions/routes.ts';
import {
  ensureTables,
  freePort,
  localClient,
  startDynamoDbLocal,
  tableEnvironment,
  tableNamesWithPrefix,
  type RunningDynamoDb,
  type TableNames,
} from '../../local/dynamodb.ts';
import { send, type RawResponse } from './support.ts';

/**
 * DynamoDB goes away under load and comes back. The service runs in a process of its own
 * (serve-local.ts) against a DynamoDB Local of this test, with its data on disk so it survives
 * the restart. While the database is down every answer is a quick 503 with Retry-After (never a
 * 500, never a hang); once it is back the same service process answers normally again, and the
 * tables reconcile with what clients were told.
 */
let port: number;
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
        created_at: { S: new Date().toISOString() },
      },
    }),
  );
  client.destroy();

  service = spawn(join('node_modules', '.bin', 'tsx'), [join('test', 'attack', 'serve-local.ts')], {
    env: { ...process.env, ...tableEnvironment(names), DYNAMODB_ENDPOINT: dynamodb.endpoint, TOKEN_CACHE_SECONDS: '0' },
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

/** Sends a new request, or the same request again as `retryOf`. */
async function oneRequest(phase: Outcome['phase'], now: () => Outcome['phase'] = () => phase, retryOf?: Outcome): Promise<Outcome> {
  const n = retryOf ? Number(retryOf.id.slice(2)) : ++sequence;
  const id = `T-${n}`;
  const kind = n % 2 ? 'void' : 'create';
  const started = performance.now();
  const response =
    kind === 'void'
      ? await send(urls.pos, { method: 'POST', path: '/v2.0/voided_transactions', headers, body: JSON.stringify({ transaction: { site_id: 'S', pos_transaction_id: id } }) })
      : await send(urls.core, {
          method: 'POST',
          path: '/v1.0/codegen',
          headers: [...headers, 'Idempotency-Key', id],
          body: JSON.stringify({ code_generator: { generation_type: 'numeric', code_length: 8, store_id: n } }),
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
  const documents = DynamoDBDocumentClient.from(client);
  try {
    const items: Record<string, any>[] = [];
    let start: Record<string, any> | undefined;
    do {
      const page = await documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  } finally {
    client.destroy();
  }
}

describe('DynamoDB stopped under load', () => {
  it('answers 503 with Retry-After while it is down, and recovers by itself when it returns', async () => {
    let phase: Outcome['phase'] = 'before';
    let finish!: () => void;
    const finished = new Promise<void>((done) => (finish = done));
    const traffic = load(6, () => phase, finished);

    await pause(1500);
    phase = 'down';
    await dynamodb.stop();
    await pause(3000);
    dynamodb = await startDynamoDbLocal({ port, dataDirectory });
    phase = 'after';
    await pause(4000);
    finish();
    const outcomes = await traffic;

    const byPhase = (p: Outcome['phase']) => outcomes.filter((o) => o.phase === p);
    const statuses = (list: Outcome[]) => [...new Set(list.map((o) => o.response.status))].sort();
    console.log(
      `outage: ${outcomes.length} requests; before ${JSON.stringify(statuses(byPhase('before')))}, ` +
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
    expect(settledBefore.filter((o) => o.response.status >= 300).map((o) => o.response.text), 'failures before the outage').toEqual([]);
    // While down, requests kept being answered, and (after in-flight ones) only with 503.
    const down = byPhase('down');
    expect(down.filter((o) => o.response.status === 503).length, 'answers while down').toBeGreaterThan(6);
    // Recovered without a restart of the service: the tail of the run is all successes.
    const after = byPhase('after');
    const tail = after.slice(-Math.min(12, Math.floor(after.length / 3)));
    expect(tail.length).toBeGreaterThan(0);
    expect(tail.every((o) => o.response.status < 300), JSON.stringify(tail.map((o) => o.response.status))).toBe(true);
    expect(service.exitCode).toBeNull();

    // Clients retry what got 503: every write then converges to exactly one record and one event.
    const unanswered = outcomes.filter((o) => o.response.status === 503);
    const retries = await Promise.all(unanswered.map((o) => oneRequest('after', undefined, o)));
    expect(retries.map((r) => r.response.status).filter((status) => status >= 300)).toEqual([]);

    const [voids, generators, events] = await Promise.all([scan(names.voidedTransactions), scan(names.codeGenerators), scan(names.events)]);
    const voidIds = outcomes.filter((o) => o.kind === 'void').map((o) => o.id);
    const createIds = outcomes.filter((o) => o.kind === 'create').length;
    const stored = new Set(voids.map((v) => v.pos_transaction_id));
    const missing = outcomes.filter((o) => o.kind === 'void' && !stored.has(o.id));
    const retryOf = (o: Outcome) => retries.find((r) => r.id === o.id)?.response.status;
    expect(
      missing.map((o) => `${o.id} ${o.phase}→${o.endPhase} ${o.response.status} (retry ${retryOf(o)}) ${o.response.text}`),
      'voids clients were told about, missing from the table',
    ).toEqual([]);
    expect(voids.map((v) => v.pos_transaction_id).sort()).toEqual([...voidIds].sort());
    expect(generators).toHaveLength(createIds);
    expect(events).toHaveLength(voids.length + generators.length);
    const resourceIds = new Set(events.map((e) => e.resource_id));
    for (const v of voids) expect(resourceIds.has(`S/${v.pos_transaction_id}`)).toBe(true);
    for (const g of generators) expect(resourceIds.has(String(g.id))).toBe(true);
    // Every 2xx answer names a record that exists.
    const generatorIds = new Set(generators.map((g) => g.id));
    for (const o of outcomes.filter((x) => x.kind === 'create' && x.response.status === 201)) {
      expect(generatorIds.has(o.response.json.code_generator.id)).toBe(true);
    }
  }, 120_000);
});
