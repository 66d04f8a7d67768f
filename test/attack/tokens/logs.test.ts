import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newToken } from '../../../functions/http/tokens.ts';
import { newAccount } from '../../support/accounts.ts';
import { captureLogs, failingDynamoOperation, type DynamoTransport } from '../support.ts';
import { invoke } from '../../support/invoke.ts';

/**
 * Token values never reach a log line: every route is driven through successes, client errors and
 * server faults with logging at DEBUG (and Powertools' event logging switched on in the
 * environment), and everything written to stdout, stderr and the console
 * is searched for the tokens sent.
 */
type Handler = (event: unknown, context: unknown) => Promise<unknown>;
let handlers: Record<'createCodeGenerator' | 'getEvent' | 'deleteEvent' | 'voidTransaction', Handler>;
let transport: DynamoTransport;
const captured: string[] = [];
const savedLevel = process.env.POWERTOOLS_LOG_LEVEL;
const savedLogEvent = process.env.POWERTOOLS_LOGGER_LOG_EVENT;

beforeAll(async () => {
  vi.resetModules();
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
  // As an operator debugging a stage might: Powertools would then log each whole event (the chains refuse).
  process.env.POWERTOOLS_LOGGER_LOG_EVENT = 'true';
  captureLogs(captured);
  handlers = {
    createCodeGenerator: (await import('../../../functions/codes/create-code-generator.ts')).handler as Handler,
    getEvent: (await import('../../../functions/events/get-event.ts')).handler as Handler,
    deleteEvent: (await import('../../../functions/events/delete-event.ts')).handler as Handler,
    voidTransaction: (await import('../../../functions/redemption/void-transaction.ts')).handler as Handler,
  };
  const { dynamodb } = await import('../../../functions/runtime/clients.ts');
  transport = (dynamodb.config as unknown as { requestHandler: typeof transport }).requestHandler;
});

afterAll(() => {
  vi.restoreAllMocks();
  if (savedLevel === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
  else process.env.POWERTOOLS_LOG_LEVEL = savedLevel;
  if (savedLogEvent === undefined) delete process.env.POWERTOOLS_LOGGER_LOG_EVENT;
  else process.env.POWERTOOLS_LOGGER_LOG_EVENT = savedLogEvent;
});

/** Every request of one DynamoDB operation answers with an error of `type`. */
const failing = (operation: string, status: number, type: string) => failingDynamoOperation(transport, operation, status, type);

describe('logs', () => {
  it('never contain a token, on any route, in success, client-error and server-error paths', async () => {
    const account = await newAccount();
    const unknownToken = newToken();
    const garbageToken = 'not-a-token-but-secret-looking-0123456789';
    const headers = (token: string, extra: Record<string, string> = {}) => ({ 'X-Auth-Token': token, ...extra });
    const generator = { code_generator: { generation_type: 'tillgate', code_length: 8, store_id: 1 } };
    const transaction = { transaction: { site_id: 'S', pos_transaction_id: 'P' } };
    const statuses: number[] = [];
    const run = async (operationId: keyof typeof handlers, path: string, request: Parameters<typeof invoke>[3]) => {
      const response = await invoke(handlers[operationId], operationId, path, request);
      statuses.push(response.statusCode);
      return response;
    };

    // successes
    await run('createCodeGenerator', '/v1.0/codegen', { headers: headers(account.token, { 'Idempotency-Key': 'k1' }), body: generator });
    await run('createCodeGenerator', '/v1.0/codegen', { headers: headers(account.token, { 'Idempotency-Key': 'k1' }), body: generator });
    await run('voidTransaction', '/v2.0/voided_transactions', { headers: headers(account.token), body: transaction });
    const { eventsOf } = await import('../../support/records.ts');
    const [event] = await eventsOf(account.accountId);
    await run('getEvent', `/v1.0/events/${event!.id}`, { headers: headers(account.token) });
    await run('deleteEvent', `/v1.0/events/${event!.id}`, { headers: headers(account.token) });

    // client errors, with good and bad tokens
    for (const token of [account.token, unknownToken, garbageToken]) {
      await run('createCodeGenerator', '/v1.0/codegen', { headers: headers(token), body: '{' });
      await run('createCodeGenerator', '/v1.0/codegen', { headers: headers(token), body: { code_generator: { code_length: '8' } } });
      await run('createCodeGenerator', '/v1.0/codegen', { headers: headers(token, { 'Content-Type': 'text/plain' }), body: generator });
      await run('createCodeGenerator', '/v1.0/codegen', { headers: headers(token), body: 'x'.repeat(20_000) });
      await run('createCodeGenerator', '/v1.0/codegen', {
        headers: headers(token, { 'Idempotency-Key': 'k1' }),
        body: { code_generator: { ...generator.code_generator, store_id: 2 } },
      });
      await run('voidTransaction', '/v2.0/voided_transactions', { headers: headers(token), body: { transaction: { site_id: '' } } });
      await run('getEvent', '/v1.0/events/abc', { headers: headers(token) });
      await run('getEvent', '/v1.0/events/999999999', { headers: headers(token) });
      await run('deleteEvent', `/v1.0/events/${event!.id}`, { headers: headers(token) });
    }
    await run('getEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': [account.token, unknownToken] } });

    // server faults: throttling (503) and an unexpected error (500) on every route
    for (const [status, type] of [
      [400, 'ThrottlingException'],
      [400, 'ValidationException'],
    ] as const) {
      const spy = failing('TransactWriteItems', status, type);
      await run('createCodeGenerator', '/v1.0/codegen', { headers: headers(account.token), body: generator });
      await run('voidTransaction', '/v2.0/voided_transactions', {
        headers: headers(account.token),
        body: { transaction: { site_id: 'S2', pos_transaction_id: 'P2' } },
      });
      spy.mockRestore();
      const deleting = failing('DeleteItem', status, type);
      await run('deleteEvent', '/v1.0/events/1', { headers: headers(account.token) });
      deleting.mockRestore();
      const reading = failing('GetItem', status, type);
      await run('getEvent', '/v1.0/events/1', { headers: headers(account.token) });
      reading.mockRestore();
    }

    expect(new Set(statuses)).toEqual(new Set([200, 201, 400, 401, 404, 409, 413, 415, 422, 500, 503]));
    const output = captured.join('\n');
    // The capture saw the request log lines and the error lines of the faults.
    expect(captured.filter((line) => line.includes('"message":"request"')).length).toBeGreaterThanOrEqual(statuses.length);
    expect(output).toContain('request failed');
    for (const secret of [account.token, unknownToken, garbageToken]) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain(secret.slice(3, 20));
    }
    expect(output.toLowerCase()).not.toContain('x-auth-token');
  });
});
