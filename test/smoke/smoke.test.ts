import { freePort } from '../../local/dynamodb.ts';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes, type HostId } from '../../functions/routes.ts';
import { call } from '../support/http.ts';

/**
 * `npm run smoke` as an operator runs it (scripts/smoke.ts in a child process) against the local
 * stack as `npm start` runs it (local/start.ts in a child process, on free ports and tables of its
 * own in the suite's DynamoDB Local, so that whatever it drives, webhook deliveries included, sees
 * only this file's records): the run passes, and against deliberately broken targets each run
 * fails with a line that names what is wrong. Every request goes to 127.0.0.1.
 */
interface Stack {
  readonly urls: Record<HostId, string>;
  readonly env: NodeJS.ProcessEnv;
  readonly token: string;
  readonly process: ChildProcess;
  readonly directory: string;
}
let stack: Stack;
const servers: Server[] = [];

async function startStack(): Promise<Stack> {
  const directory = mkdtempSync(join(tmpdir(), 'tillgate-smoke-'));
  const tokenFile = join(directory, 'dev-token');
  const env = {
    ...process.env,
    CORE_PORT: '0',
    POS_PORT: '0',
    // Not the default 4568: other files (the docs runner's stacks) start local S3 servers beside it.
    S3_PORT: String(await freePort()),
    TILLGATE_S3_DATA_DIR: join(directory, 's3'),
    TABLE_PREFIX: `smoke-${randomBytes(4).toString('hex')}-`,
    TILLGATE_DEV_TOKEN_FILE: tokenFile,
    TILLGATE_CUSTOMER_KEY_FILE: join(directory, 'customer-key'),
    TILLGATE_WEBHOOK_SECRETS_KEY_FILE: join(directory, 'webhook-secrets-key'),
    TILLGATE_CURSOR_KEY_FILE: join(directory, 'cursor-key'),
    TILLGATE_DATA_DIR: join(directory, 'dynamodb'),
  };
  const child = spawn(join('node_modules', '.bin', 'tsx'), ['local/start.ts'], { env });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  const banner = await new Promise<string>((done, fail) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ctrl-C stops everything.')) done(output);
    });
    child.on('exit', (code) => fail(new Error(`local/start.ts exited with ${code} before it was ready:\n${output}`)));
  });
  const url = (host: string) => new RegExp(`${host} host +\\(v[\\d.]+\\): (http://127\\.0\\.0\\.1:\\d+)`).exec(banner)![1]!;
  return { urls: { core: url('core'), pos: url('pos') }, env, token: readFileSync(tokenFile, 'utf8').trim(), process: child, directory };
}

beforeAll(async () => {
  // The S3 port found free can be taken before the stack listens on it: start again, up to 3 times.
  for (let attempt = 1; ; attempt++) {
    try {
      stack = await startStack();
      return;
    } catch (error) {
      if (attempt >= 3 || !/already in use/.test(String(error))) throw error;
    }
  }
});
afterAll(async () => {
  if (stack) {
    const exited = new Promise((done) => stack.process.once('exit', done));
    stack.process.kill('SIGTERM');
    await exited;
    rmSync(stack.directory, { recursive: true, force: true });
  }
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

/** `call` of the suite (checked against the OpenAPI documents), to the spawned stack. */
const request = (host: HostId, method: string, path: string, body?: unknown) =>
  call({ urls: stack.urls, close: async () => undefined }, host, method, path, { token: stack.token, body });

/** What a shop would see of the account: its live events and its generators. */
async function accountState() {
  const feed = await request('core', 'GET', '/v1.0/events?limit=1000');
  const generators = await request('core', 'GET', '/v1.0/codegen?limit=1000');
  const endpoints = await request('core', 'GET', '/v1.0/webhook_endpoints?limit=100');
  return {
    events: feed.json.events,
    generators: generators.json.code_generators as { id: number; status: string; store_id: number }[],
    endpoints: endpoints.json.webhook_endpoints,
  };
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Report lines of checks, by result. */
  readonly failures: string[];
}

/** The command as `npm run smoke --` runs it; SMOKE_* of this environment do not leak in. */
function smoke(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SMOKE_')));
  const child = spawn(join('node_modules', '.bin', 'tsx'), ['scripts/smoke.ts', ...args], { env: { ...clean, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((done) =>
    child.on('close', (code) => done({ code, stdout, stderr, failures: stdout.split('\n').filter((line) => line.startsWith('FAIL ')) })),
  );
}

const target = (urls: Record<HostId, string> = stack.urls, token = stack.token) => ['--core-url', urls.core, '--pos-url', urls.pos, '--token', token];

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/**
 * A stand-in for a stage that is almost right: it forwards each request to the local API and
 * lets `tamper` change the answer (its status or a header) before the client sees it.
 */
async function tamperingStage(tamper: (host: HostId, method: string, path: string, answer: Answer) => void): Promise<Record<HostId, string>> {
  const proxy = async (host: HostId) =>
    listen(
      createServer(async (request, response) => {
        const body = await bodyOf(request);
        const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'connection')) as Record<
          string,
          string
        >;
        const upstream = await fetch(`${stack.urls[host]}${request.url}`, { method: request.method, headers, body: body.length > 0 ? body : undefined });
        const answer: Answer = { status: upstream.status, headers: new Headers(upstream.headers), body: await upstream.text() };
        tamper(host, request.method!, request.url!.split('?')[0]!, answer);
        answer.headers.delete('content-length');
        answer.headers.delete('transfer-encoding');
        response.writeHead(answer.status, Object.fromEntries(answer.headers));
        response.end(answer.body);
      }),
    );
  return { core: await proxy('core'), pos: await proxy('pos') };
}

/** A receiver of webhook deliveries, as an operator would name with --webhook-url. */
async function webhookReceiver() {
  const received: { headers: IncomingMessage['headers']; body: string }[] = [];
  const url = await listen(
    createServer(async (request, response) => {
      received.push({ headers: request.headers, body: (await bodyOf(request)).toString() });
      response.writeHead(204).end();
    }),
  );
  return { url, received };
}

const hasWebhooks = routes.some((route) => route.operationId === 'createWebhookEndpoint');

describe('npm run smoke against the local stack', () => {
  it('passes, with an ok line for every route of the route table, and leaves nothing a shop would see', async () => {
    // Records of the account that the run must not touch: a generator, its event, a void.
    const theirs = await request('core', 'POST', '/v1.0/codegen', {
      code_generator: { generation_type: 'numeric', code_length: 6, store_id: 7, description: 'Summer sale' },
    });
    expect(theirs.status).toBe(201);
    expect((await request('pos', 'POST', '/v2.0/voided_transactions', { transaction: { site_id: 'S-1', pos_transaction_id: 'T-1' } })).status).toBe(200);
    const before = await accountState();
    const receiver = await webhookReceiver();

    const run = await smoke([...target(), '--webhook-url', receiver.url, '--wait', '10']);

    expect(run.failures, run.stdout + run.stderr).toEqual([]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    for (const route of routes) {
      expect(run.stdout, route.operationId).toMatch(new RegExp(`^ok   \\d{3}  ${route.operationId} +${route.method} `, 'm'));
    }
    expect(run.stdout).toMatch(/^ok {3}404 {2}unknownRoute +GET \/v1\.0\/smoke-no-such-route +\d+ ms$/m);
    expect(run.stdout).toMatch(/^ok {3}404 {2}unknownRoute +GET \/v2\.0\/smoke-no-such-route +\d+ ms$/m);
    expect(run.stdout).toMatch(/^ok {3}405 {2}methodNotAllowed +DELETE \/v1\.0\/\S+ +\d+ ms$/m);
    expect(run.stdout).toMatch(/^ok {3}405 {2}methodNotAllowed +DELETE \/v2\.0\/\S+ +\d+ ms$/m);
    expect(run.stdout).toMatch(/^ok {3}401 {2}\w+ +\w+ \/v1\.0\/\S+ \(no token\) +\d+ ms$/m);
    expect(run.stdout).toMatch(/^ok {3}401 {2}voidTransaction +POST \/v2\.0\/voided_transactions \(no token\) +\d+ ms$/m);
    expect(run.stdout).toMatch(/^ok {3}201 {2}createCodeGenerator +POST \/v1\.0\/codegen +\d+ ms$/m);
    expect(run.stdout).toMatch(/^ok: \d+ checks passed in \d+\.\d s \(smoke run [0-9a-f]{8}\)$/m);
    expect(run.stdout, 'a promotion code is never printed').not.toMatch(/SMOKE-[2-9A-Z]{12}/i);
    expect(run.stdout + run.stderr, 'the token is never printed').not.toContain(stack.token);
    if (hasWebhooks) expect(receiver.received.length).toBeGreaterThan(0);
    // The webhook checks walk one endpoint's whole life, in this order, and see it gone at the end.
    const webhookLines = run.stdout
      .split('\n')
      .filter((line) => /Webhook/.test(line))
      .map((line) => {
        const [, result, status, name, note] = /^(\w+) +(\d{3}) +(\w+) +\S+ \S+(?: \((.+)\))? +\d+ ms$/.exec(line) ?? [undefined, line];
        return `${result} ${status} ${name}${note ? ` (${note})` : ''}`;
      });
    expect(webhookLines).toEqual([
      'ok 201 createWebhookEndpoint',
      'ok 200 listWebhookEndpoints',
      'ok 200 getWebhookEndpoint',
      'ok 200 updateWebhookEndpoint (If-Match)',
      'ok 200 rotateWebhookSecret',
      'ok 200 listWebhookDeliveries',
      'ok 202 retryWebhookDelivery',
      'ok 200 deleteWebhookEndpoint',
      'ok 404 getWebhookEndpoint (deleted)',
    ]);

    // Its events acknowledged, the account's other events still there; its webhook endpoint
    // deleted; its generator inactive and labelled, the others untouched.
    const after = await accountState();
    expect(after.events).toEqual(before.events);
    expect(after.endpoints).toEqual(before.endpoints);
    const ours = after.generators.filter((generator) => !before.generators.some((other) => other.id === generator.id));
    expect(after.generators.slice(0, before.generators.length)).toEqual(before.generators);
    expect(ours).toEqual([
      expect.objectContaining({
        status: 'inactive',
        store_id: 999_999_999,
        prefix: 'SMOKE-',
        description: expect.stringMatching(/^tillgate smoke run \d{4}-\d\d-\d\dT/),
      }),
    ]);
  }, 90_000);
});

describe('npm run smoke against a broken stage fails, naming what is wrong', () => {
  it('the two hosts swapped', async () => {
    const run = await smoke(target({ core: stack.urls.pos, pos: stack.urls.core }));

    expect(run.code).toBe(1);
    expect(run.failures[0]).toMatch(
      /^FAIL 404 {2}unknownRoute +GET \/v1\.0\/smoke-no-such-route +\d+ ms {2}--core-url answers in the pos host's error shape: are --core-url and --pos-url swapped\?$/,
    );
    expect(run.stdout).toMatch(/^FAIL 404 {2}unknownRoute +GET \/v2\.0\/smoke-no-such-route +\d+ ms {2}--pos-url answers in the core host's error shape/m);
    expect(run.stdout).toMatch(/^FAIL 404 {2}methodNotAllowed +DELETE \/v1\.0\/codegen +\d+ ms {2}--core-url answers in the pos host's error shape/m);
    expect(run.stdout).toMatch(
      /^FAIL 404 {2}createCodeGenerator +POST \/v1\.0\/codegen +\d+ ms {2}expected 201, got 404: No route for this method and path: POST \/v1\.0\/codegen is served by the core host \(http:\/\/127\.0\.0\.1:\d+ here\), not the pos host \(no such route on this host: is --core-url the core host/m,
    );
    expect(run.stdout).toMatch(/^FAIL: \d+ of \d+ checks failed/m);
  }, 60_000);

  it('a wrong token, reported in one JSON document with --json', async () => {
    const run = await smoke([...target(stack.urls, `tg_${'A'.repeat(43)}`), '--json']);

    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.ok).toBe(false);
    const created = report.checks.find((check: { name: string }) => check.name === 'createCodeGenerator');
    expect(created).toMatchObject({ result: 'fail', method: 'POST', path: '/v1.0/codegen', expected_status: 201, status: 401 });
    expect(created.problems[0]).toMatch(/^expected 201, got 401: .+ \(is --token a live token of this stage\?\)$/);
    expect(report.checks.find((check: { name: string }) => check.name === 'getCodeGenerator')).toMatchObject({
      result: 'skip',
      reason: 'needs a code generator (createCodeGenerator did not get one)',
    });
    // The gateway's answers do not depend on the token.
    expect(report.checks.filter((check: { name: string }) => check.name === 'unknownRoute').map((check: { result: string }) => check.result)).toEqual([
      'ok',
      'ok',
    ]);
    expect(report.summary.failed).toBeGreaterThan(0);
  }, 60_000);

  it('a token whose scope does not cover both hosts', async () => {
    // The token tool, as an operator would use it, on the stack's own tables.
    const issued = spawnSync(join('node_modules', '.bin', 'tsx'), ['scripts/tokens.ts', 'create', '--account', '1', '--scope', 'pos', '--name', 'a till'], {
      env: stack.env,
      encoding: 'utf8',
    });
    expect(issued.status, issued.stderr).toBe(0);

    const run = await smoke(target(stack.urls, issued.stdout.trim()));

    expect(run.code).toBe(1);
    expect(run.failures[0]).toMatch(
      /^FAIL 403 {2}createCodeGenerator +POST \/v1\.0\/codegen +\d+ ms {2}expected 201, got 403: .+ \(the token's scope does not cover the core host: use a token of scope all\)$/,
    );
    expect(run.stdout).toMatch(/^ok {3}200 {2}voidTransaction +POST \/v2\.0\/voided_transactions +\d+ ms$/m);
  }, 60_000);

  it('a stage that answers a wrong status', async () => {
    const urls = await tamperingStage((host, method, path, answer) => {
      if (host === 'core' && method === 'POST' && path === '/v1.0/codegen' && answer.status === 201) answer.status = 200;
    });

    const before = await accountState();

    const run = await smoke(target(urls));

    expect(run.code).toBe(1);
    expect(run.failures[0]).toMatch(/^FAIL 200 {2}createCodeGenerator +POST \/v1\.0\/codegen +\d+ ms {2}expected 201, got 200$/);
    // The generator the answer named is the run's all the same: checked, then left inactive, its events acknowledged.
    expect(run.failures).toHaveLength(1);
    const after = await accountState();
    expect(after.events).toEqual(before.events);
    expect(after.endpoints).toEqual(before.endpoints);
    expect(after.generators.slice(before.generators.length).map((generator) => generator.status)).toEqual(['inactive']);
  }, 60_000);

  it('a stage without its 405 methods (a known path under another method answers as an unknown one)', async () => {
    const urls = await tamperingStage((host, _method, _path, answer) => {
      if (answer.status !== 405) return;
      answer.status = 404;
      answer.headers.delete('allow');
      const message = 'No route for this method and path';
      answer.body = JSON.stringify(
        host === 'core'
          ? { errors: [{ message }] }
          : { transaction: { errors: [{ message }], display_messages: [{ message, message_id: 'not_found', message_content: {}, priority: 1 }] } },
      );
    });

    const run = await smoke(target(urls));

    expect(run.code).toBe(1);
    expect(run.failures).toEqual([
      expect.stringMatching(
        /^FAIL 404 {2}methodNotAllowed +DELETE \/v1\.0\/codegen +\d+ ms {2}expected 405, got 404: No route for this method and path \(the stage answers a known path's other methods as an unknown route/,
      ),
      expect.stringMatching(
        /^FAIL 404 {2}methodNotAllowed +DELETE \/v2\.0\/voided_transactions +\d+ ms {2}expected 405, got 404: No route for this method and path \(the stage answers/,
      ),
    ]);
  }, 60_000);

  it('a stage whose answers lack a header', async () => {
    const urls = await tamperingStage((host, _method, _path, answer) => {
      if (host === 'pos') answer.headers.delete('x-request-id');
    });

    const run = await smoke(target(urls));

    expect(run.code).toBe(1);
    expect(run.failures.length).toBeGreaterThan(0);
    for (const line of run.failures) expect(line).toMatch(/ \/v2\.0\/.* {2}no X-Request-Id header$/);
  }, 60_000);

  it('a stage whose answers carry a wrong header', async () => {
    const urls = await tamperingStage((host, method, _path, answer) => {
      if (host === 'core' && method === 'GET' && answer.status === 200) answer.headers.set('content-type', 'application/json');
    });

    const run = await smoke(target(urls));

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^FAIL 200 {2}getCodeGenerator +GET \/v1\.0\/codegen\/\d+ +\d+ ms {2}header Content-Type is "application\/json", expected "application\/json; charset=utf-8"$/m,
    );
    expect(run.failures.every((line) => / GET \/v1\.0\//.test(line))).toBe(true);
  }, 60_000);
});

describe('npm run smoke usage', () => {
  it('names a missing setting and exits 2', async () => {
    const run = await smoke([]);

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^smoke: --core-url \(or SMOKE_CORE_URL\) is required\n\nUsage: npm run smoke/);
    expect(run.stdout).toBe('');
  });

  it('takes the target from SMOKE_* variables, a flag winning over its variable', async () => {
    const run = await smoke(['--core-url', 'http://127.0.0.1:9'], { SMOKE_CORE_URL: 'not a url', SMOKE_POS_URL: 'http://127.0.0.1:10' });

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^smoke: --token \(or SMOKE_TOKEN\) is required/);
  });

  it('refuses a URL that is not http(s), and an unknown option', async () => {
    const wrongScheme = await smoke(['--core-url', 'ftp://example.com', '--pos-url', 'http://127.0.0.1:10', '--token', 'x']);
    expect(wrongScheme.code).toBe(2);
    expect(wrongScheme.stderr).toMatch(/^smoke: --core-url must be an http:\/\/ or https:\/\/ URL, got ftp:/);

    const unknown = await smoke(['--core', 'http://127.0.0.1:9']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^smoke: Unknown option '--core'/);
  });
});
