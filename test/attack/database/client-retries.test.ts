import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dynamodb } from '../../../functions/runtime/clients.ts';
import { testClient } from '../../support/client.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { voidsOf } from '../../support/records.ts';

/**
 * The typed client (client/index.ts) on a 503: it repeats what cannot be done twice, after
 * Retry-After, and nothing else. The fault is injected at the DynamoDB client of the handlers'
 * sources, which the local API runs in this process (as faults.test.ts beside it does); the
 * bundles carry their own copy of the client, so this runs on the sources only.
 */
const ctx = useLocalApi();
const client = (options?: Parameters<typeof testClient>[2]) => testClient(ctx.api, ctx.account.token, options);
const generatorBody = { code_generator: winterPromotion };
async function newGenerator() {
  const result = await client().core.POST('/v1.0/codegen', { body: generatorBody });
  if (result.status !== 201) throw new Error(`create: ${result.status}`);
  return result.data.code_generator;
}

describe('the typed client retries on a 503', () => {
  type Handle = (request: { headers: Record<string, string> }, options?: unknown) => Promise<unknown>;
  const transport = (dynamodb.config as unknown as { requestHandler: { handle: Handle } }).requestHandler;
  /** The first `times` attempts of `operation` answer ThrottlingException: with the SDK's 3 attempts a call, every 3 make one 503. */
  function throttle(operation: string, times: number) {
    const passThrough = transport.handle.bind(transport);
    let attempts = 0;
    vi.spyOn(transport, 'handle').mockImplementation(async (request, options) => {
      if (request.headers['x-amz-target'] !== `DynamoDB_20120810.${operation}` || ++attempts > times) return passThrough(request, options);
      return {
        response: {
          statusCode: 400,
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'INJECTED' },
          body: Readable.from([Buffer.from(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'injected' }))]),
        },
      };
    });
  }
  afterEach(() => vi.restoreAllMocks());

  /** Counts what really goes out, below the OpenAPI check. */
  const counting = () => {
    const sent: string[] = [];
    const send = (request: Request) => {
      sent.push(`${request.method} ${new URL(request.url).pathname}`);
      return fetch(request);
    };
    return { sent, send };
  };

  it('a GET answered 503 with Retry-After: waits Retry-After seconds, sends it again, gets the 200', async () => {
    const { id } = await newGenerator();
    const waits: number[] = [];
    const { sent, send } = counting();
    throttle('GetItem', 3);

    const result = await client({ send, retry: { sleep: async (ms) => void waits.push(ms) } }).core.GET('/v1.0/codegen/{id}', {
      params: { path: { id: id } },
    });

    expect(result.status).toBe(200);
    expect(waits).toEqual([1000]);
    expect(sent).toEqual([`GET /v1.0/codegen/${id}`, `GET /v1.0/codegen/${id}`]);
  });

  it('a void answered 503: sent again, voided once', async () => {
    const { sent, send } = counting();
    throttle('TransactWriteItems', 3);

    const result = await client({ send }).pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: 'S-1', pos_transaction_id: 'P-503' } } });

    expect(result.status).toBe(200);
    expect(sent).toHaveLength(2);
    expect(await voidsOf(ctx.account.accountId)).toHaveLength(1);
  });

  it('never a create without Idempotency-Key answered 503 (a slow write may have been applied): the typed 503 is the answer', async () => {
    const { sent, send } = counting();
    throttle('TransactWriteItems', Infinity);

    const result = await client({ send }).core.POST('/v1.0/codegen', { body: generatorBody });

    expect(result.status).toBe(503);
    if (result.status === 503) expect(result.error.errors[0]?.message).toBe('The service is temporarily unavailable; retry after the Retry-After delay');
    expect(result.response.headers.get('retry-after')).toBe('1');
    expect(sent).toHaveLength(1);
  });
});
