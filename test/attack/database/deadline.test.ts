import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { api } from '../../../functions/http/chain.ts';
import { ok } from '../../../functions/http/reply.ts';
import idPath from '../../../functions/http/schemas/idPath.generated.ts';
import { dynamodb, MAX_ATTEMPTS, REQUEST_TIMEOUT_MS } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { DeadlineExceededError, TIMEOUT_RESERVE_MS, deadlineSignal, withDeadline } from '../../../functions/runtime/deadline.ts';
import { handler as createCodeGenerator } from '../../../functions/codes/create-code-generator.ts';
import { handler as getEvent } from '../../../functions/events/get-event.ts';
import { handler as voidTransaction } from '../../../functions/redemption/void-transaction.ts';
import { newAccount } from '../../support/accounts.ts';
import { invoke } from '../../support/invoke.ts';
import { codeGeneratorsOf, eventsOf, voidsOf } from '../../support/records.ts';

/**
 * A database that accepts connections and never answers, at one stage of a request at a time.
 * A real database hangs for every call at once (test/attack/database/outage.test.ts freezes DynamoDB
 * Local); here one operation's requests are sent, by the real HTTP handler with its real
 * time-outs, to a TCP listener that never answers, so each stage is shown to end in time.
 * Handlers run in-process with a short remaining time, so the deadline (remaining time minus
 * TIMEOUT_RESERVE_MS) comes during the SDK's second attempt, before its own attempts run out.
 */
interface HttpRequestLike {
  headers: Record<string, string>;
  body?: string;
  hostname?: string;
  port?: number;
}
type Handle = (request: HttpRequestLike, options?: unknown) => Promise<{ response: unknown }>;
const transport = (dynamodb.config as unknown as { requestHandler: { handle: Handle } }).requestHandler;
const passThrough: Handle = transport.handle.bind(transport);

let listener: Server;
let hungPort: number;
const sockets = new Set<Socket>();

beforeAll(async () => {
  listener = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // Reads the request, answers nothing, ever.
    socket.resume();
  });
  await new Promise<void>((done) => listener.listen(0, '127.0.0.1', () => done()));
  hungPort = (listener.address() as { port: number }).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((done) => listener.close(done));
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** Sends `operation` on `table` to the hung listener; returns the attempt counter. */
function hang(operation: string, table?: string) {
  const attempts = { count: 0 };
  vi.spyOn(transport, 'handle').mockImplementation(async (request, options) => {
    const matches =
      request.headers['x-amz-target'] === `DynamoDB_20120810.${operation}` && (table === undefined || String(request.body).includes(`"TableName":"${table}"`));
    if (!matches) return passThrough(request, options);
    attempts.count += 1;
    const hung = Object.assign(Object.create(Object.getPrototypeOf(request)), request, { hostname: '127.0.0.1', port: hungPort });
    return passThrough(hung, options);
  });
  return attempts;
}

const SERVICE_UNAVAILABLE = 'The service is temporarily unavailable; retry after the Retry-After delay';
const REMAINING_MS = REQUEST_TIMEOUT_MS + TIMEOUT_RESERVE_MS + 500;
const DEADLINE_MS = REMAINING_MS - TIMEOUT_RESERVE_MS;

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

describe('a hung database ends in 503 with Retry-After before the invocation deadline, whatever the stage', () => {
  it('token lookup (a before middleware): 503 at the deadline, attempts stopped by the time left', async () => {
    const account = await newAccount();
    const attempts = hang('GetItem', tableName('apiKeys'));

    const { result: response, ms } = await timed(() =>
      invoke(getEvent, 'getEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': account.token }, remainingMs: REMAINING_MS }),
    );

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    expect(JSON.parse(response.body)).toEqual({ errors: [{ message: SERVICE_UNAVAILABLE }] });
    // The first attempt timed out; the second was cut by the deadline, no third began.
    expect(attempts.count).toBe(2);
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(ms).toBeLessThan(REMAINING_MS - 500);
    console.log(`deadline: hung token lookup answered 503 after ${Math.round(ms)} ms (remaining ${REMAINING_MS} ms, deadline ${DEADLINE_MS} ms)`);
  });

  it("the handler's transaction on the pos host: 503 with the cashier message, and no void or event", async () => {
    const account = await newAccount();
    hang('TransactWriteItems');

    const { result: response, ms } = await timed(() =>
      invoke(voidTransaction, 'voidTransaction', '/v2.0/voided_transactions', {
        headers: { 'X-Auth-Token': account.token, 'X-Request-Id': 'req-hung-1' },
        body: { transaction: { site_id: 'S1', pos_transaction_id: 'P1' } },
        remainingMs: REMAINING_MS,
      }),
    );

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    expect(JSON.parse(response.body)).toEqual({
      transaction: {
        errors: [{ message: SERVICE_UNAVAILABLE }],
        display_messages: [
          {
            message: 'Voiding is temporarily unavailable. Wait a moment and try again; nothing will be recorded twice.',
            message_id: 'service_unavailable',
            message_content: { request_id: 'req-hung-1' },
            priority: 1,
          },
        ],
      },
    });
    expect(ms).toBeLessThan(REMAINING_MS - 500);
    expect(await voidsOf(account.accountId)).toEqual([]);
    expect(await eventsOf(account.accountId)).toEqual([]);
  });

  it('with the whole function timeout left: the SDK gives up after its 3 attempts, well inside 10 s', async () => {
    const account = await newAccount();
    // A create is one TransactWriteItems (ids come from a block reserved in memory).
    const attempts = hang('TransactWriteItems');

    const { result: response, ms } = await timed(() =>
      invoke(createCodeGenerator, 'createCodeGenerator', '/v1.0/codegen', {
        headers: { 'X-Auth-Token': account.token },
        body: { code_generator: { generation_type: 'numeric', code_length: 6, store_id: 1 } },
      }),
    );

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    expect(attempts.count).toBe(MAX_ATTEMPTS);
    expect(ms).toBeGreaterThanOrEqual(MAX_ATTEMPTS * REQUEST_TIMEOUT_MS);
    expect(ms).toBeLessThan(10_000 - TIMEOUT_RESERVE_MS);
    expect(await codeGeneratorsOf(account.accountId)).toEqual([]);
    console.log(`deadline: hung counter update answered 503 after ${Math.round(ms)} ms (${MAX_ATTEMPTS} attempts of ${REQUEST_TIMEOUT_MS} ms)`);
  });

  it("a handler that waits on something else: middy's early timeout answers 503 at the deadline", async () => {
    const account = await newAccount();
    const waitsForever = api({ host: 'core', operationId: 'getEvent', params: idPath }).handler(() => new Promise(() => undefined).then(() => ok({})));

    const { result: response, ms } = await timed(() =>
      invoke(waitsForever, 'getEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': account.token }, remainingMs: REMAINING_MS }),
    );

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    expect(JSON.parse(response.body)).toEqual({ errors: [{ message: SERVICE_UNAVAILABLE }] });
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(ms).toBeLessThan(REMAINING_MS - 500);
  });

  it('the database answering again: the next request succeeds, nothing to restart', async () => {
    const account = await newAccount();
    hang('GetItem', tableName('apiKeys'));
    const hung = await invoke(getEvent, 'getEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': account.token }, remainingMs: REMAINING_MS });
    expect(hung.statusCode).toBe(503);
    vi.restoreAllMocks();

    const answered = await invoke(getEvent, 'getEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': account.token } });
    expect(answered.statusCode).toBe(404);
    expect(JSON.parse(answered.body)).toEqual({ errors: [{ message: 'Event 1 not found' }] });
  });
});

describe('when the invocation has answered', () => {
  it("aborts its deadline signal, so a DynamoDB call still retrying (middy's early time-out won the race) cannot write later", async () => {
    let signal: AbortSignal | undefined;
    const answer = await withDeadline(10_000, async () => {
      signal = deadlineSignal();
      return 'answered';
    });

    expect(answer).toBe('answered');
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(DeadlineExceededError);
  });
});
