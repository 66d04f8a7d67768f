import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dynamodb } from '../../../functions/runtime/clients.ts';
import { handler as createCodeGenerator } from '../../../functions/codes/create-code-generator.ts';
import { handler as deleteEvent } from '../../../functions/events/delete-event.ts';
import { handler as getEvent } from '../../../functions/events/get-event.ts';
import { handler as voidTransaction } from '../../../functions/redemption/void-transaction.ts';
import { newAccount } from '../../support/accounts.ts';
import { invoke } from '../../support/invoke.ts';
import { codeGeneratorsOf, eventsOf, voidsOf } from '../../support/records.ts';

/**
 * Faults injected at the DynamoDB client's HTTP handler, below the SDK's retries, so that every
 * attempt is counted and the SDK parses the injected answers exactly as it parses DynamoDB's.
 * Handlers run in-process. The client allows DYNAMODB_MAX_ATTEMPTS (default 3) attempts.
 */
const MAX_ATTEMPTS = 3;

interface HttpRequestLike {
  headers: Record<string, string>;
  body?: string;
}
type Handle = (request: HttpRequestLike, options?: unknown) => Promise<{ response: unknown }>;
const transport = (dynamodb.config as unknown as { requestHandler: { handle: Handle } }).requestHandler;
const passThrough: Handle = transport.handle.bind(transport);

type Operation = 'GetItem' | 'UpdateItem' | 'TransactWriteItems' | 'DeleteItem' | 'Query' | 'PutItem';
type Fault = (request: HttpRequestLike, options: unknown) => Promise<{ response: unknown }>;

/** A DynamoDB error answer, as the service sends it (JSON 1.0 protocol). */
const dynamoError =
  (status: number, type: string, extra: Record<string, unknown> = {}): Fault =>
  async () => ({
    response: {
      statusCode: status,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'INJECTED' },
      body: Readable.from([Buffer.from(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: 'injected', ...extra }))]),
    },
  });
const throttled = dynamoError(400, 'ThrottlingException');
const capacityExceeded = dynamoError(400, 'ProvisionedThroughputExceededException');
const internalServerError = dynamoError(500, 'InternalServerError');
const validationException = dynamoError(400, 'ValidationException', { message: 'One or more parameter values were invalid: secret-table-internals' });
const networkError =
  (code: string): Fault =>
  async () => {
    throw Object.assign(new Error(`injected ${code}`), { code });
  };
/** The request reaches DynamoDB and is applied, but its answer is lost on the way back. */
const answerLost: Fault = async (request, options) => {
  await passThrough(request, options);
  throw Object.assign(new Error('injected: socket hang up after the write'), { code: 'ECONNRESET' });
};

/**
 * Makes `operation` fail with `fault` for its first `times` attempts (all, by default); other
 * requests pass through. Returns the attempt counter.
 */
function inject(operation: Operation, fault: Fault, times = Infinity) {
  const attempts = { count: 0 };
  vi.spyOn(transport, 'handle').mockImplementation(async (request, options) => {
    if (request.headers['x-amz-target'] !== `DynamoDB_20120810.${operation}`) return passThrough(request, options);
    attempts.count += 1;
    return attempts.count <= times ? fault(request, options) : passThrough(request, options);
  });
  return attempts;
}

afterEach(() => {
  vi.restoreAllMocks();
});

const generatorBody = { code_generator: { generation_type: 'numeric', code_length: 6, store_id: 3 } };
const voidBody = { transaction: { site_id: 'S1', pos_transaction_id: 'P1' } };
const create = (token: string, headers: Record<string, string> = {}) =>
  invoke(createCodeGenerator, 'createCodeGenerator', '/v1.0/codegen', {
    headers: { 'X-Auth-Token': token, 'X-Request-Id': 'req-fault-1', ...headers },
    body: generatorBody,
  });
const voidIt = (token: string) =>
  invoke(voidTransaction, 'voidTransaction', '/v2.0/voided_transactions', {
    headers: { 'X-Auth-Token': token, 'X-Request-Id': 'req-fault-2' },
    body: voidBody,
  });

const SERVICE_UNAVAILABLE_CORE = {
  errors: [{ message: 'The service is temporarily unavailable; retry after the Retry-After delay' }],
};

async function expectNothingWritten(accountId: number) {
  const [generators, events, voids] = await Promise.all([codeGeneratorsOf(accountId), eventsOf(accountId), voidsOf(accountId)]);
  expect({ generators, events, voids }).toEqual({ generators: [], events: [], voids: [] });
}

describe('DynamoDB throttling and transient faults', () => {
  it.each([
    ['ThrottlingException', throttled],
    ['ProvisionedThroughputExceededException', capacityExceeded],
    ['InternalServerError (HTTP 500)', internalServerError],
    ['ECONNRESET', networkError('ECONNRESET')],
    ['ECONNREFUSED', networkError('ECONNREFUSED')],
  ])('%s on every attempt of the token lookup: 503 with Retry-After after exactly DYNAMODB_MAX_ATTEMPTS attempts', async (_, fault) => {
    const account = await newAccount();
    const attempts = inject('GetItem', fault);

    const response = await create(account.token);

    expect(attempts.count).toBe(MAX_ATTEMPTS);
    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    expect(JSON.parse(response.body)).toEqual(SERVICE_UNAVAILABLE_CORE);
    await expectNothingWritten(account.accountId);
  });

  it('throttled transaction on the pos host: 503, Retry-After, a cashier message, and no void or event', async () => {
    const account = await newAccount();
    const attempts = inject('TransactWriteItems', throttled);

    const response = await voidIt(account.token);

    expect(attempts.count).toBe(MAX_ATTEMPTS);
    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    expect(JSON.parse(response.body)).toEqual({
      transaction: {
        errors: [{ message: 'The service is temporarily unavailable; retry after the Retry-After delay' }],
        display_messages: [
          {
            message: 'Voiding is temporarily unavailable. Wait a moment and try again; nothing will be recorded twice.',
            message_id: 'service_unavailable',
            message_content: { request_id: 'req-fault-2' },
            priority: 1,
          },
        ],
      },
    });
    await expectNothingWritten(account.accountId);
  });

  it('a fault the retries absorb (throttled twice, then served) answers 201 and writes once', async () => {
    const account = await newAccount();
    const attempts = inject('TransactWriteItems', throttled, MAX_ATTEMPTS - 1);

    const response = await create(account.token);

    expect(attempts.count).toBe(MAX_ATTEMPTS);
    expect(response.statusCode).toBe(201);
    expect(await codeGeneratorsOf(account.accountId)).toHaveLength(1);
    expect(await eventsOf(account.accountId)).toHaveLength(1);
  });

  it('transaction conflicts that outlast the retries: 503 after a bounded number of attempts, nothing written', async () => {
    const account = await newAccount();
    const conflict = dynamoError(400, 'TransactionCanceledException', {
      CancellationReasons: [{ Code: 'TransactionConflict', Message: 'injected' }, { Code: 'None' }],
    });
    const attempts = inject('TransactWriteItems', conflict);

    const response = await voidIt(account.token);

    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    expect(attempts.count).toBeGreaterThan(1);
    expect(attempts.count).toBeLessThanOrEqual(6);
    await expectNothingWritten(account.accountId);
  });

  it('a DynamoDB timeout answers 503, not 500', async () => {
    const account = await newAccount();
    const timeout: Fault = async () => {
      throw Object.assign(new Error('injected: connection timed out'), { name: 'TimeoutError', code: 'ETIMEDOUT' });
    };
    inject('TransactWriteItems', timeout);
    const response = await create(account.token);
    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    await expectNothingWritten(account.accountId);
  });
});

describe('unexpected faults', () => {
  it.each([
    ['POST /v1.0/codegen', 'TransactWriteItems', () => create] as const,
    [
      'GET /v1.0/events/{id}',
      'GetItem',
      () => (token: string) => invoke(getEvent, 'getEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': token, 'X-Request-Id': 'req-fault-1' } }),
    ] as const,
    [
      'DELETE /v1.0/events/{id}',
      'DeleteItem',
      () => (token: string) => invoke(deleteEvent, 'deleteEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': token, 'X-Request-Id': 'req-fault-1' } }),
    ] as const,
  ])('%s: a non-transient DynamoDB error answers 500 with a generic message and the request id, no internals', async (_, operation, request) => {
    const account = await newAccount();
    // Token lookups are GetItems too: fail only the ones after the first (the token check).
    let seen = 0;
    vi.spyOn(transport, 'handle').mockImplementation(async (req, options) => {
      if (req.headers['x-amz-target'] !== `DynamoDB_20120810.${operation}`) return passThrough(req, options);
      seen += 1;
      return operation === 'GetItem' && seen === 1 ? passThrough(req, options) : validationException(req, options);
    });

    const response = await request()(account.token);

    expect(response.statusCode).toBe(500);
    expect(response.headers['Retry-After']).toBeUndefined();
    expect(JSON.parse(response.body)).toEqual({ errors: [{ message: 'Internal server error; quote request id req-fault-1 to support' }] });
    expect(response.body).not.toMatch(/ValidationException|secret-table-internals|at .*\.ts|Error/);
    await expectNothingWritten(account.accountId);
  });

  it('a bug in the pos handler path answers 500 with a cashier message carrying the request id', async () => {
    const account = await newAccount();
    inject('TransactWriteItems', validationException);
    const response = await voidIt(account.token);
    expect(response.statusCode).toBe(500);
    const body = JSON.parse(response.body);
    expect(body.transaction.errors).toEqual([{ message: 'Internal server error; quote request id req-fault-2 to support' }]);
    expect(body.transaction.display_messages[0]).toMatchObject({ message_id: 'internal_error', message_content: { request_id: 'req-fault-2' } });
    expect(response.body).not.toMatch(/ValidationException|secret-table-internals|stack/);
    await expectNothingWritten(account.accountId);
  });
});

describe('a failure between steps never splits a record from its event', () => {
  it('ids allocated, then the transaction fails: no generator, no event; the next create works', async () => {
    const account = await newAccount();
    const attempts = inject('TransactWriteItems', validationException, 1);

    const failed = await create(account.token);
    expect(failed.statusCode).toBe(500);
    expect(attempts.count).toBe(1);
    await expectNothingWritten(account.accountId);

    const next = await create(account.token);
    expect(next.statusCode).toBe(201);
    const [generators, events] = await Promise.all([codeGeneratorsOf(account.accountId), eventsOf(account.accountId)]);
    expect(generators.map((g) => String(g.id))).toEqual(events.map((e) => e.resource_id));
  });

  it('ids allocated, then the transaction is throttled past the retries: 503 and nothing written', async () => {
    const account = await newAccount();
    inject('TransactWriteItems', throttled);
    const failed = await voidIt(account.token);
    expect(failed.statusCode).toBe(503);
    await expectNothingWritten(account.accountId);
  });

  it('a void whose answer is lost after DynamoDB applied it: the retry finds it; one void, one event, 200', async () => {
    const account = await newAccount();
    inject('TransactWriteItems', answerLost, 1);

    const response = await voidIt(account.token);

    expect(response.statusCode).toBe(200);
    const [voids, events] = await Promise.all([voidsOf(account.accountId), eventsOf(account.accountId)]);
    expect(voids).toHaveLength(1);
    expect(events.map((e) => e.id)).toEqual([voids[0]!.event_id]);
    expect(JSON.parse(response.body).transaction.display_messages[0].message_content.event_id).toBe(voids[0]!.event_id);
  });

  it('a create whose answer is lost after DynamoDB applied it: one generator, one event, and the answer names it', async () => {
    const account = await newAccount();
    inject('TransactWriteItems', answerLost, 1);

    const response = await create(account.token);

    const [generators, events] = await Promise.all([codeGeneratorsOf(account.accountId), eventsOf(account.accountId)]);
    expect(generators).toHaveLength(1);
    expect(events.map((e) => e.resource_id)).toEqual([String(generators[0]!.id)]);
    expect(response.statusCode).toBe(201);
    expect(JSON.parse(response.body).code_generator.id).toBe(generators[0]!.id);
  });

  it('with an Idempotency-Key, a lost answer then a client retry: one generator, both answers identical', async () => {
    const account = await newAccount();
    inject('TransactWriteItems', answerLost, MAX_ATTEMPTS);

    const first = await create(account.token, { 'Idempotency-Key': 'lost-answer' });
    vi.restoreAllMocks();
    const retry = await create(account.token, { 'Idempotency-Key': 'lost-answer' });

    const [generators, events] = await Promise.all([codeGeneratorsOf(account.accountId), eventsOf(account.accountId)]);
    expect(generators).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(retry.statusCode).toBe(201);
    expect(JSON.parse(retry.body).code_generator.id).toBe(generators[0]!.id);
    if (first.statusCode === 201) expect(first.body).toBe(retry.body);
    else expect(first.statusCode).toBe(503);
  });
});
