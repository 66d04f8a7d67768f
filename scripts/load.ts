import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import autocannon, { type Result } from 'autocannon';
import { freePort, scanAll } from '../local/dynamodb.ts';
import { startLocalStack } from '../local/stack.ts';
import { createTillgate, type CoreBody, type PosBody } from '../client/index.ts';

/**
 * `npm run load -- [--duration 30] [--connections 16]`: load and soak run of the local stack.
 *
 * Starts its own DynamoDB Local (in memory, on a free port) with its own tables, the local server
 * with the TypeScript handlers, and a few fresh accounts; measures two baselines (a trivial HTTP
 * endpoint and a DynamoDB GetItem loop); then drives both hosts with autocannon for the given time
 * with a mix of every operation: creates with and without Idempotency-Key (some keys repeated),
 * voids (some repeated), GETs and DELETEs of events that exist. Afterwards it reconciles what
 * clients were told with the tables: every 2xx write present with exactly one event, no lost or
 * duplicated record, no 5xx. Exits 1 on any mismatch. Traffic goes to 127.0.0.1 only. The seed
 * goes through the typed client (client/index.ts); autocannon sends the load itself, its bodies
 * typed as the documents say (CoreBody, PosBody).
 */
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '30' },
    connections: { type: 'string', default: '16' },
    accounts: { type: 'string', default: '3' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const accountCount = Number(values.accounts);
if (!(duration > 0 && connections >= 2 && accountCount >= 1)) {
  console.error('usage: npm run load -- [--duration SECONDS] [--connections N>=2] [--accounts N]');
  process.exit(2);
}
const baselineSeconds = Math.max(2, Math.min(5, Math.round(duration / 6)));

// ---------------------------------------------------------------- the stack

const port = await freePort();
console.log(`load: DynamoDB Local (in memory) on 127.0.0.1:${port} …`);
const stack = await startLocalStack({
  dynamodb: { port },
  tablePrefix: 'load-',
  environment: {
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'ERROR',
    // Production settings: the deployed functions cache a valid token for 30 s (tokenCacheSeconds).
    TOKEN_CACHE_SECONDS: process.env.TOKEN_CACHE_SECONDS ?? '30',
  },
  api: { log: () => undefined },
});
const api = stack.api!;
const names = stack.tableNames;

// Imported only now: data-access modules read their table names when they load.
const { issueToken } = await import('../functions/http/tokens.ts');
const { documents } = await import('../functions/runtime/clients.ts');
const { GetCommand } = await import('@aws-sdk/lib-dynamodb');

const accounts = await Promise.all(
  Array.from({ length: accountCount }, async (_, i) => {
    const accountId = 900_000 + i;
    return { accountId, token: (await issueToken(accountId, `load ${i}`, 'all')).token };
  }),
);
const accountIds = new Set(accounts.map((a) => a.accountId));
const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)]!;

// ---------------------------------------------------------------- figures

interface Figures {
  readonly name: string;
  readonly requests: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly non2xx: number;
  readonly errors: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function figuresFrom(name: string, latencies: number[], seconds: number, non2xx: number, errors: number): Figures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    name,
    requests: sorted.length,
    perSecond: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? 0,
    non2xx,
    errors,
  };
}

const fromAutocannon = (name: string, r: Result): Figures => ({
  name,
  requests: r.requests.total,
  perSecond: r.requests.total / r.duration,
  p50: r.latency.p50,
  p90: r.latency.p90,
  p99: r.latency.p99,
  max: r.latency.max,
  non2xx: r.non2xx,
  errors: r.errors,
});

function printTable(rows: Figures[]) {
  const header = ['workload', 'requests', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors'];
  const cells = rows.map((r) => [
    r.name,
    String(r.requests),
    r.perSecond.toFixed(0),
    r.p50.toFixed(1),
    r.p90.toFixed(1),
    r.p99.toFixed(1),
    r.max.toFixed(1),
    String(r.non2xx),
    String(r.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

// ---------------------------------------------------------------- baselines, same process, same run

async function httpBaseline(): Promise<Figures> {
  const body = JSON.stringify({ ok: true });
  const server = createServer((_, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) });
    response.end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  const result = await autocannon({ url, connections, duration: baselineSeconds, title: 'baseline-http' });
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
  return fromAutocannon('baseline: trivial HTTP endpoint', result);
}

async function dynamoBaseline(): Promise<Figures> {
  const latencies: number[] = [];
  let failures = 0;
  const until = Date.now() + baselineSeconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const t = performance.now();
        try {
          await documents.send(new GetCommand({ TableName: names.apiKeys, Key: { token_hash: 'baseline' } }));
          latencies.push(performance.now() - t);
        } catch {
          failures += 1;
        }
      }
    }),
  );
  return figuresFrom('baseline: DynamoDB GetItem loop', latencies, (performance.now() - started) / 1000, failures, 0);
}

// ---------------------------------------------------------------- the mixed workload

/** What clients were told, for the reconciliation. */
const told = {
  generators: new Map<number, number>(), // generator id → account
  keyedAnswers: new Map<string, string>(), // account#key → first 201 body
  voids: new Map<string, { body: string; eventId: number }>(), // account#site#pos → first answer
  acknowledged: new Set<number>(), // events deleted with 200
};
/** Sent but not answered when the run stopped: they may or may not have been applied. */
const pending = {
  creates: 0,
  keyed: new Map<string, number>(),
  voids: new Set<string>(),
  deletes: new Set<number>(),
};
const mismatches: string[] = [];
const statusCounts = new Map<string, number>();
const count = (label: string, status: number) => statusCounts.set(`${label} ${status}`, (statusCounts.get(`${label} ${status}`) ?? 0) + 1);
const mismatch = (message: string) => {
  if (mismatches.length < 50) mismatches.push(message);
  else mismatches.length === 50 && mismatches.push('… (more)');
};

/** Events known to exist: some only read (never deleted), some deleted exactly once. */
const readable: { id: number; token: string }[] = [];
const deletable: { id: number; token: string }[] = [];

/** Recent requests, shared by all connections, to send again as clients retrying (autocannon clears a connection's context each round). */
const recentVoids: { account: number; site: string; pos: string }[] = [];
const recentKeyed: { account: number; token: string; key: string; body: string }[] = [];
const remember = <T>(list: T[], item: T) => {
  list.push(item);
  if (list.length > 50) list.shift();
};

const json = (value: unknown) => JSON.stringify(value);
let serial = 0;
const generatorBody = (storeId: number) =>
  json({
    code_generator: { generation_type: pick(['tillgate', 'numeric'] as const), code_length: 8, store_id: storeId },
  } satisfies CoreBody<'createCodeGenerator'>);
const voidBody = (transaction: PosBody<'voidTransaction'>['transaction']) => json({ transaction } satisfies PosBody<'voidTransaction'>);

function recordVoid(account: number, site: string, pos: string, status: number, body: string) {
  pending.voids.delete(`${account}#${site}#${pos}`);
  count('void', status);
  if (status !== 200) return mismatch(`void ${site}/${pos}: ${status} ${body.slice(0, 200)}`);
  const key = `${account}#${site}#${pos}`;
  const first = told.voids.get(key);
  if (first) {
    if (first.body !== body) mismatch(`void ${key}: a repeat answered differently`);
    return;
  }
  const eventId = JSON.parse(body).transaction.display_messages[0].message_content.event_id as number;
  told.voids.set(key, { body, eventId });
  const token = accounts.find((a) => a.accountId === account)!.token;
  (readable.length <= deletable.length ? readable : deletable).push({ id: eventId, token });
}

const posRequests = [
  {
    method: 'POST',
    path: '/v2.0/voided_transactions',
    setupRequest: (request: any, context: any) => {
      const account = pick(accounts);
      const pos = `T-${++serial}`;
      context.sent = { account: account.accountId, site: 'site-1', pos };
      pending.voids.add(`${account.accountId}#site-1#${pos}`);
      remember(recentVoids, context.sent);
      return {
        ...request,
        headers: { 'X-Auth-Token': account.token, 'Content-Type': 'application/json' },
        body: voidBody({ site_id: 'site-1', pos_transaction_id: pos }),
      };
    },
    onResponse: (status: number, body: string, context: any) => recordVoid(context.sent.account, context.sent.site, context.sent.pos, status, body),
  },
  {
    // A till retrying: the same void again, perhaps from an upgraded agent.
    method: 'POST',
    path: '/v2.0/voided_transactions',
    setupRequest: (request: any, context: any) => {
      const sent = pick(recentVoids);
      context.sent = sent;
      pending.voids.add(`${sent.account}#${sent.site}#${sent.pos}`);
      const token = accounts.find((a) => a.accountId === sent.account)!.token;
      return {
        ...request,
        headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
        body: voidBody({ site_id: sent.site, pos_transaction_id: sent.pos, posagent_version: `9.${serial % 7}` }),
      };
    },
    onResponse: (status: number, body: string, context: any) => recordVoid(context.sent.account, context.sent.site, context.sent.pos, status, body),
  },
];

const coreRequests = [
  {
    method: 'POST',
    path: '/v1.0/codegen',
    setupRequest: (request: any, context: any) => {
      const account = pick(accounts);
      context.sent = { account: account.accountId };
      pending.creates += 1;
      return { ...request, headers: { 'X-Auth-Token': account.token, 'Content-Type': 'application/json' }, body: generatorBody(++serial) };
    },
    onResponse: (status: number, body: string, context: any) => {
      pending.creates -= 1;
      count('create', status);
      if (status !== 201) return mismatch(`create: ${status} ${body.slice(0, 200)}`);
      told.generators.set(JSON.parse(body).code_generator.id, context.sent.account);
    },
  },
  {
    method: 'POST',
    path: '/v1.0/codegen',
    setupRequest: (request: any, context: any) => {
      // A new key two times in three; otherwise a repeat of an earlier keyed request.
      let sent = recentKeyed.length > 0 && Math.random() < 1 / 3 ? pick(recentKeyed) : undefined;
      if (!sent) {
        const account = pick(accounts);
        sent = { account: account.accountId, token: account.token, key: randomUUID(), body: generatorBody(++serial) };
        remember(recentKeyed, sent);
      }
      context.sent = sent;
      const pendingKey = `${sent.account}#${sent.key}`;
      pending.keyed.set(pendingKey, (pending.keyed.get(pendingKey) ?? 0) + 1);
      return { ...request, headers: { 'X-Auth-Token': sent.token, 'Content-Type': 'application/json', 'Idempotency-Key': sent.key }, body: sent.body };
    },
    onResponse: (status: number, body: string, context: any) => {
      const key = `${context.sent.account}#${context.sent.key}`;
      const left = (pending.keyed.get(key) ?? 1) - 1;
      if (left > 0) pending.keyed.set(key, left);
      else pending.keyed.delete(key);
      count('create+key', status);
      if (status !== 201) return mismatch(`create with key: ${status} ${body.slice(0, 200)}`);
      const first = told.keyedAnswers.get(key);
      if (first !== undefined && first !== body) mismatch(`create with key ${key}: a repeat answered differently`);
      if (first === undefined) told.keyedAnswers.set(key, body);
      told.generators.set(JSON.parse(body).code_generator.id, context.sent.account);
    },
  },
  {
    method: 'GET',
    path: '/v1.0/events/0',
    setupRequest: (request: any, context: any) => readEvent(request, context),
    onResponse: (status: number, body: string, context: any) => checkRead(status, body, context),
  },
  {
    // Acknowledges an event nobody has deleted yet; when none is left, reads one instead.
    method: 'DELETE',
    path: '/v1.0/events/0',
    setupRequest: (request: any, context: any) => {
      const event = deletable.shift();
      if (!event) return readEvent(request, context);
      context.sent = event;
      context.deleting = true;
      pending.deletes.add(event.id);
      return { ...request, method: 'DELETE', path: `/v1.0/events/${event.id}`, headers: { 'X-Auth-Token': event.token } };
    },
    onResponse: (status: number, body: string, context: any) => {
      if (!context.deleting) return checkRead(status, body, context);
      pending.deletes.delete(context.sent.id);
      count('delete', status);
      if (status !== 200 || body !== ' ') mismatch(`DELETE event ${context.sent.id}: ${status} ${body.slice(0, 200)}`);
      else told.acknowledged.add(context.sent.id);
    },
  },
];

function readEvent(request: any, context: any) {
  const event = pick(readable);
  context.sent = event;
  context.deleting = false;
  return { ...request, method: 'GET', path: `/v1.0/events/${event.id}`, headers: { 'X-Auth-Token': event.token } };
}

function checkRead(status: number, body: string, context: any) {
  count('get', status);
  if (status !== 200 || JSON.parse(body).event?.id !== context.sent.id) mismatch(`GET event ${context.sent.id}: ${status} ${body.slice(0, 200)}`);
}

async function mixedLoad(): Promise<{ core: Result; pos: Result; combined: Figures }> {
  const latencies: number[] = [];
  const onResponse = (_client: unknown, _status: number, _bytes: number, responseTime: number) => latencies.push(responseTime);
  const started = performance.now();
  const posConnections = Math.max(1, Math.floor(connections / 3));
  const core = autocannon({ url: api.urls.core, connections: connections - posConnections, duration, requests: coreRequests, title: 'core' });
  const pos = autocannon({ url: api.urls.pos, connections: posConnections, duration, requests: posRequests, title: 'pos' });
  core.on('response', onResponse);
  pos.on('response', onResponse);
  const [coreResult, posResult] = await Promise.all([core, pos]);
  const seconds = (performance.now() - started) / 1000;
  const non2xx = coreResult.non2xx + posResult.non2xx;
  return {
    core: coreResult,
    pos: posResult,
    combined: figuresFrom('tillgate: mixed, both hosts', latencies, seconds, non2xx, coreResult.errors + posResult.errors),
  };
}

// ---------------------------------------------------------------- reconciliation

async function scanTable(table: string): Promise<Record<string, any>[]> {
  return (await scanAll(documents, { TableName: table })).filter((item) => accountIds.has(item.account_id));
}

/** Requests cut off by the end of the run are still being served: wait until the tables are still. */
async function settle(): Promise<void> {
  let previous = '';
  for (let i = 0; i < 30; i++) {
    await new Promise((done) => setTimeout(done, 500));
    const counts = (await Promise.all([names.codeGenerators, names.posTransactions, names.events].map(scanTable))).map((items) => items.length).join();
    if (counts === previous) return;
    previous = counts;
  }
}

async function reconcile(): Promise<string[]> {
  await settle();
  const problems: string[] = [];
  const [generators, voids, events] = await Promise.all([scanTable(names.codeGenerators), scanTable(names.posTransactions), scanTable(names.events)]);
  const eventsByResource = new Map<string, Record<string, any>[]>();
  for (const event of events) {
    const key = `${event.type}:${event.resource_id}`;
    eventsByResource.set(key, [...(eventsByResource.get(key) ?? []), event]);
  }
  const eventIds = new Set(events.map((e) => e.id as number));

  // Every created generator is in the table, and nothing else is.
  const stored = new Set(generators.map((g) => g.id as number));
  for (const [id] of told.generators) if (!stored.has(id)) problems.push(`generator ${id} answered 201 but is not in the table`);
  const untold = [...stored].filter((id) => !told.generators.has(id));
  // Creates cut off by the end of the run may have been applied; no more than were cut off.
  const cutOff = pending.creates + pending.keyed.size;
  if (untold.length > cutOff) {
    problems.push(
      `${untold.length} generators in the table that no client was told of, only ${cutOff} creates were cut off: ${untold.slice(0, 10).join(', ')}`,
    );
  }
  const keyedIds = new Set([...told.keyedAnswers.values()].map((body) => JSON.parse(body).code_generator.id));
  if (keyedIds.size !== told.keyedAnswers.size) problems.push('two Idempotency-Keys answered with the same generator');

  // Every void is in the table, once.
  const storedVoids = new Map(voids.map((v) => [`${v.account_id}#${v.site_id}#${v.pos_transaction_id}`, v]));
  for (const [key, answer] of told.voids) {
    const record = storedVoids.get(key);
    if (!record) problems.push(`void ${key} answered 200 but is not in the table`);
    else if (record.event_id !== answer.eventId) problems.push(`void ${key} names event ${answer.eventId}, the table ${record.event_id}`);
  }
  for (const key of storedVoids.keys()) {
    if (!told.voids.has(key) && !pending.voids.has(key)) problems.push(`void ${key} is in the table but no client sent it`);
  }

  // Exactly one event per record, except those acknowledged (deleted) by a 200 DELETE.
  const expectEvent = (type: string, resource: string, eventId?: number) => {
    const found = eventsByResource.get(`${type}:${resource}`) ?? [];
    const deleted = eventId !== undefined && told.acknowledged.has(eventId);
    const maybeDeleted = eventId !== undefined && pending.deletes.has(eventId);
    if (found.length > 1) problems.push(`${type} ${resource} has ${found.length} events`);
    if (found.length === 0 && !deleted && !maybeDeleted) problems.push(`${type} ${resource} has no event`);
    if (found.length === 1 && deleted) problems.push(`event ${eventId} was acknowledged but still exists`);
  };
  for (const g of generators) expectEvent('code_generator.created', String(g.id));
  for (const v of voids) expectEvent('transaction.voided', `${v.site_id}/${v.pos_transaction_id}`, v.event_id);
  for (const id of told.acknowledged) if (eventIds.has(id)) problems.push(`event ${id} acknowledged but still exists`);
  const expectedEvents = generators.length + voids.length - told.acknowledged.size;
  const missing = expectedEvents - events.length;
  if (missing < 0 || missing > pending.deletes.size) problems.push(`${events.length} events in the table, expected ${expectedEvents}`);

  console.log(
    `reconciliation: ${generators.length} generators (${told.keyedAnswers.size} distinct Idempotency-Keys), ` +
      `${voids.length} voids, ${events.length} events (${told.acknowledged.size} acknowledged and deleted); ` +
      `cut off by the end of the run: ${pending.creates + pending.keyed.size} creates, ${pending.voids.size} voids, ${pending.deletes.size} deletes`,
  );
  return problems;
}

// ---------------------------------------------------------------- run

let exitCode = 0;
try {
  console.log(`load: baselines, ${baselineSeconds} s each, ${connections} connections …`);
  const baselines = [await httpBaseline(), await dynamoBaseline()];

  // Seed events to read and delete, so GETs and DELETEs have targets from the first second.
  // One at a time, keeping each answer's text as received: a repeat under load is compared with it byte for byte.
  let received = '';
  const keepText = async (request: Request) => {
    const response = await fetch(request);
    received = await response.clone().text();
    return response;
  };
  const tills = accounts.map(
    (account) => createTillgate({ coreUrl: api.urls.core, posUrl: api.urls.pos, token: account.token, fetch: keepText, retry: { retries: 0 } }).pos,
  );
  for (let i = 0; i < 40; i++) {
    const account = accounts[i % accounts.length]!;
    const answer = await tills[i % accounts.length]!.POST('/v2.0/voided_transactions', {
      body: { transaction: { site_id: 'seed', pos_transaction_id: `S-${i}` } },
    });
    recordVoid(account.accountId, 'seed', `S-${i}`, answer.status, received);
  }

  console.log(`load: mixed workload for ${duration} s, ${connections} connections over both hosts …`);
  const { core, pos, combined } = await mixedLoad();

  console.log('');
  printTable([...baselines, combined, fromAutocannon('  core host (codegen, events)', core), fromAutocannon('  pos host (voids)', pos)]);
  console.log('');
  console.log(
    `status codes: ${[...statusCounts]
      .sort()
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')}`,
  );
  const serverErrors = core['5xx'] + pos['5xx'];
  const problems = await reconcile();
  if (serverErrors > 0) problems.push(`${serverErrors} responses were 5xx`);
  if (core.errors + pos.errors > 0) problems.push(`${core.errors + pos.errors} connection errors or timeouts`);
  problems.push(...mismatches);
  if (problems.length > 0) {
    console.log(`RESULT: FAIL — ${problems.length} problem(s):`);
    for (const p of problems) console.log(`  - ${p}`);
    exitCode = 1;
  } else {
    console.log('RESULT: OK — zero 5xx, every 2xx write in the tables with exactly one event, nothing lost or duplicated');
  }
} catch (error) {
  console.error(error);
  exitCode = 1;
} finally {
  await stack.stop();
}
process.exit(exitCode);
