import { request, Agent } from 'node:http';
import { Readable } from 'node:stream';
import { beforeEach, expect, vi } from 'vitest';
import { routes, type HostId } from '../../functions/routes.ts';
import type { LocalApi } from '../../local/server.ts';

/**
 * Helpers shared by the attack suites: a raw HTTP client (fetch merges repeated headers and
 * refuses some values; attacks need both), and the checks every answer must pass.
 */
export interface RawRequest {
  readonly method: string;
  readonly path: string;
  /** Header names and values in order, repeated names allowed, as Node's rawHeaders. */
  readonly headers?: readonly string[];
  readonly body?: string | Buffer;
}

export interface RawResponse {
  readonly status: number;
  /** Lower-case names; a repeated header keeps every value. */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: any;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export function send(baseUrl: string, req: RawRequest, timeoutMs = 15_000): Promise<RawResponse> {
  return new Promise((done, fail) => {
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    // Raw headers, so names may repeat in any case; then Node adds none of its own.
    const url = new URL(baseUrl);
    const headers = ['Host', url.host, 'Connection', 'keep-alive', ...(req.headers ?? [])];
    if (body !== undefined || !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(req.method)) {
      headers.push('Content-Length', String(body?.length ?? 0));
    }
    const options = { method: req.method, headers, agent, timeout: timeoutMs, setDefaultHeaders: false };
    const outgoing = request(`${baseUrl}${req.path}`, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        done({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${req.method} ${req.path} got no answer within ${timeoutMs} ms`)));
    outgoing.on('error', fail);
    outgoing.end(body);
  });
}

export const sendTo = (api: LocalApi, host: HostId, req: RawRequest, timeoutMs?: number) => send(api.urls[host], req, timeoutMs);

/** True when the value has exactly these keys (in any order). */
const hasKeys = (value: unknown, keys: string[]) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).sort().join() === [...keys].sort().join();

/** The host's error body: core `{"errors":[…]}`, pos `{"transaction":{"errors":[…],"display_messages":[…]}}`. */
function isErrorShape(host: HostId, body: unknown): boolean {
  const isProblem = (p: unknown, allowField: boolean) =>
    (hasKeys(p, ['message']) || (allowField && hasKeys(p, ['message', 'field']))) &&
    typeof (p as { message: unknown }).message === 'string' &&
    (p as { message: string }).message.length > 0 &&
    ((p as { field?: unknown }).field === undefined || typeof (p as { field: unknown }).field === 'string');
  if (host === 'core') {
    if (!hasKeys(body, ['errors'])) return false;
    const errors = (body as { errors: unknown }).errors;
    return Array.isArray(errors) && errors.length > 0 && errors.every((p) => isProblem(p, true));
  }
  if (!hasKeys(body, ['transaction'])) return false;
  const transaction = (body as { transaction: unknown }).transaction;
  if (!hasKeys(transaction, ['errors', 'display_messages'])) return false;
  const { errors, display_messages: messages } = transaction as { errors: unknown; display_messages: unknown };
  return (
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every((p) => isProblem(p, false)) &&
    Array.isArray(messages) &&
    messages.length === 1 &&
    messages.every(
      (m) =>
        hasKeys(m, ['message', 'message_id', 'message_content', 'priority']) &&
        typeof m.message === 'string' &&
        typeof m.message_id === 'string' &&
        typeof m.message_content?.request_id === 'string' &&
        m.priority === 1,
    )
  );
}

/** Headers every answer carries, from the function or from the gateway; no banners. */
export function expectStandardHeaders(response: RawResponse): void {
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.headers['x-request-id']).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/);
  expect(response.headers['x-content-type-options']).toBe('nosniff');
  expect(response.headers['cache-control']).toBeTypeOf('string');
  expect(response.headers['x-powered-by']).toBeUndefined();
  expect(response.headers.server).toBeUndefined();
}

/** A 4xx in the host's error shape with the standard headers. */
export function expectClientError(host: HostId, response: RawResponse, method = 'GET'): void {
  expect(response.status, response.text).toBeGreaterThanOrEqual(400);
  expect(response.status, response.text).toBeLessThan(500);
  expectStandardHeaders(response);
  if (method !== 'HEAD') expect(isErrorShape(host, response.json), response.text).toBe(true);
}

/** Seed for every property of a run: FUZZ_SEED replays one. */
export function fuzzSeed(): number {
  const fromEnv = process.env.FUZZ_SEED;
  const seed = fromEnv ? Number(fromEnv) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  // A failure names its seed in its own message: CI shows failures, not every line a file printed.
  beforeEach(({ onTestFailed }) =>
    onTestFailed(({ task }) => {
      for (const error of task.result?.errors ?? [])
        error.message = `${error.message}\n(seed ${seed}: replay with FUZZ_SEED=${seed} npx vitest run ${task.file.name})`;
    }),
  );
  return seed;
}

/** mulberry32: small, seedable, good enough to choose counts, kinds of writes and delays. */
export function seededRandom(seedValue: number) {
  let state = seedValue >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)) };
}

export const fuzzRuns = (fallback: number) => Number(process.env.FUZZ_RUNS ?? fallback);

/**
 * What API Gateway answers itself for a request no route serves (PRODUCT.md, "Status codes"): 404
 * for an unknown path, 405 for a known path with a method it does not serve; undefined when a
 * route of the table serves the method and path. The path is the one `send` puts on the wire: it
 * hands Node a URL string, so dot segments are resolved and a fragment dropped.
 */
export function gatewayAnswer(host: HostId, method: string, target: string): 404 | 405 | undefined {
  const path = new URL(target, 'http://localhost').pathname;
  const template = (routePath: string) => new RegExp(`^${routePath.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`);
  const known = routes.filter((route) => route.host === host && template(route.path).test(path));
  if (known.length === 0) return 404;
  return known.some((route) => route.method === method) ? undefined : 405;
}

/** The SDK's HTTP handler, whose `handle` the fault injection below wraps. */
export type DynamoTransport = { handle: (request: { headers: Record<string, string> }, options?: unknown) => Promise<{ response: unknown }> };

/** Every request of one DynamoDB operation answers with an error of `type`; the others pass through. */
export function failingDynamoOperation(transport: DynamoTransport, operation: string, status: number, type: string) {
  const passThrough = transport.handle.bind(transport);
  return vi.spyOn(transport, 'handle').mockImplementation(async (request, options) => {
    if (request.headers['x-amz-target'] !== `DynamoDB_20120810.${operation}`) return passThrough(request, options);
    return {
      response: {
        statusCode: status,
        headers: { 'content-type': 'application/x-amz-json-1.0' },
        body: Readable.from([Buffer.from(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: 'injected' }))]),
      },
    };
  });
}

/**
 * Every line the process writes (stdout, stderr, console) goes into `captured` instead, for the
 * tests that walk all logs for something that must never appear (a token, a code, a secret).
 * Undone by `vi.restoreAllMocks()`.
 */
export function captureLogs(captured: string[]): void {
  const capture = (chunk: unknown, ...rest: unknown[]) => {
    captured.push(String(chunk));
    (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture as never);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture as never);
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void captured.push(args.map(String).join(' ')));
  }
}
