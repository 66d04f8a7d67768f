import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORE_KEYED_POSTS, createTillgate, type RetryOptions } from '../../../client/index.ts';

/**
 * The client's middleware against a fake fetch: which requests are retried, how long it waits,
 * how often. test/e2e/client/ shows the same against the local API.
 */
type Reply = Response | Error;

function fakeService(replies: Reply[], retry: RetryOptions = {}) {
  const sent: { method: string; url: string; token: string | null; key: string | null; body: string }[] = [];
  const waits: number[] = [];
  const tillgate = createTillgate({
    coreUrl: 'https://core.test',
    posUrl: 'https://pos.test',
    token: 'secret-token',
    fetch: async (request) => {
      sent.push({
        method: request.method,
        url: request.url,
        token: request.headers.get('x-auth-token'),
        key: request.headers.get('idempotency-key'),
        body: await request.text(),
      });
      const reply = replies.shift();
      if (reply === undefined) throw new Error('the fake service has no more replies');
      if (reply instanceof Error) throw reply;
      return reply;
    },
    retry: { sleep: async (ms) => void waits.push(ms), ...retry },
  });
  return { tillgate, sent, waits };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers } });
const unavailable = (retryAfter?: string) =>
  json(
    503,
    { errors: [{ message: 'The service is temporarily unavailable; retry after the Retry-After delay' }] },
    retryAfter === undefined ? {} : { 'Retry-After': retryAfter },
  );
const dropped = () => new TypeError('fetch failed');
const generator = { code_generator: { id: 1 } };
const voidBody = { transaction: { site_id: 'S-1', pos_transaction_id: 'P-1' } };
const voided = { transaction: { errors: [], display_messages: [] } };

describe('createTillgate', () => {
  it('sends X-Auth-Token on both hosts, at their base URLs', async () => {
    const { tillgate, sent } = fakeService([json(200, generator), json(200, voided)]);

    await tillgate.core.GET('/v1.0/codegen/{id}', { params: { path: { id: 1 } } });
    await tillgate.pos.POST('/v2.0/voided_transactions', { body: voidBody });

    expect(sent.map(({ method, url, token }) => [method, url, token])).toEqual([
      ['GET', 'https://core.test/v1.0/codegen/1', 'secret-token'],
      ['POST', 'https://pos.test/v2.0/voided_transactions', 'secret-token'],
    ]);
  });

  it("reads a DELETE's one-space answer as success without data (openapi-fetch alone would throw parsing it)", async () => {
    const space = () =>
      new Response(' ', { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': '1', 'X-Request-Id': 'r1' } });
    // As a proxy may pass it on: chunked, without Content-Length.
    const chunked = () =>
      new Response(' ', { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Transfer-Encoding': 'chunked', 'X-Request-Id': 'r1' } });
    const { tillgate } = fakeService([space(), space(), chunked()]);

    const event = await tillgate.core.DELETE('/v1.0/events/{id}', { params: { path: { id: 5 } } });
    const endpoint = await tillgate.core.DELETE('/v1.0/webhook_endpoints/{id}', { params: { path: { id: 7 } } });
    const proxied = await tillgate.core.DELETE('/v1.0/events/{id}', { params: { path: { id: 6 } } });

    for (const result of [event, endpoint, proxied]) {
      expect(result).toMatchObject({ status: 200, data: undefined });
      expect(result.error).toBeUndefined();
      expect(result.response.headers.get('x-request-id')).toBe('r1');
    }
  });

  it('answers a 304 as status 304 with neither data nor error', async () => {
    const { tillgate } = fakeService([new Response(null, { status: 304, headers: { ETag: 'W/"abc"' } })]);

    const result = await tillgate.core.GET('/v1.0/codegen/{id}', { params: { path: { id: 1 }, header: { 'If-None-Match': 'W/"abc"' } } });

    expect(result.status).toBe(304);
    expect(result.data).toBeUndefined();
    expect(result.error).toBeUndefined();
    expect(result.response.headers.get('etag')).toBe('W/"abc"');
  });

  describe('retries', () => {
    it('a 503 with Retry-After, after waiting that long, and sends the same request again', async () => {
      const { tillgate, sent, waits } = fakeService([unavailable('2'), json(201, generator)]);
      const body = { code_generator: { generation_type: 'numeric' as const, code_length: 6, store_id: 3 } };

      const result = await tillgate.core.POST('/v1.0/codegen', { body, params: { header: { 'Idempotency-Key': 'k1' } } });

      expect(result.status).toBe(201);
      expect(waits).toEqual([2000]);
      expect(sent).toHaveLength(2);
      expect(sent[1]).toEqual(sent[0]);
      expect(sent[1]).toMatchObject({ key: 'k1', token: 'secret-token', body: JSON.stringify(body) });
    });

    it('waits at most maxRetryAfterSeconds, reads an HTTP-date Retry-After, and stops after `retries`', async () => {
      const inAMinute = new Date(Date.now() + 60_000).toUTCString();
      const { tillgate, sent, waits } = fakeService([unavailable('3600'), unavailable(inAMinute), unavailable('1')], { retries: 2, maxRetryAfterSeconds: 5 });

      const result = await tillgate.core.GET('/v1.0/events');

      expect(result.status).toBe(503);
      expect(result.error).toEqual({ errors: [{ message: 'The service is temporarily unavailable; retry after the Retry-After delay' }] });
      expect(waits).toEqual([5000, 5000]);
      expect(sent).toHaveLength(3);
    });

    it('not a 503 without Retry-After, nor any other error status', async () => {
      for (const reply of [unavailable(), json(500, { errors: [{ message: 'x' }] }), json(429, { errors: [{ message: 'x' }] }, { 'Retry-After': '1' })]) {
        const { tillgate, sent, waits } = fakeService([reply]);
        const result = await tillgate.core.GET('/v1.0/events');
        expect(result.status).toBe(reply.status);
        expect([sent.length, waits]).toEqual([1, []]);
      }
    });

    it.each([
      ['a void', (t: ReturnType<typeof fakeService>['tillgate']) => t.pos.POST('/v2.0/voided_transactions', { body: voidBody })],
      [
        'a redemption',
        (t: ReturnType<typeof fakeService>['tillgate']) =>
          t.pos.POST('/v2.0/redeemed_codes', { body: { transaction: { ...voidBody.transaction, codes: ['A'] } } }),
      ],
      [
        'a check',
        (t: ReturnType<typeof fakeService>['tillgate']) =>
          t.pos.POST('/v2.0/validated_codes', { body: { transaction: { ...voidBody.transaction, codes: ['A'] } } }),
      ],
      ['a GET', (t: ReturnType<typeof fakeService>['tillgate']) => t.core.GET('/v1.0/events')],
      [
        'an issuance with an Idempotency-Key',
        (t: ReturnType<typeof fakeService>['tillgate']) =>
          t.core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: 1 }, header: { 'Idempotency-Key': 'b1' } }, body: { count: 1 } }),
      ],
    ])('%s after a network failure, waiting 200 ms, then 400 ms', async (_, send) => {
      const { tillgate, sent, waits } = fakeService([dropped(), dropped(), json(200, voided)]);

      const result = await send(tillgate);

      expect(result.response.status).toBe(200);
      expect(waits).toEqual([200, 400]);
      expect(sent).toHaveLength(3);
      expect(new Set(sent.map((s) => JSON.stringify(s))).size).toBe(1);
    });

    it('a network failure no more than `retries` times, then throws it', async () => {
      const { tillgate, sent } = fakeService([dropped(), dropped(), dropped()], { retries: 2 });

      await expect(tillgate.pos.POST('/v2.0/voided_transactions', { body: voidBody })).rejects.toThrow('fetch failed');
      expect(sent).toHaveLength(3);
    });

    it.each([
      [
        'a POST without Idempotency-Key',
        (t: ReturnType<typeof fakeService>['tillgate']) => t.core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: 1 } }, body: { count: 1 } }),
      ],
      [
        'a rotation (no Idempotency-Key to honour, even if sent)',
        (t: ReturnType<typeof fakeService>['tillgate']) =>
          t.core.POST('/v1.0/webhook_endpoints/{id}/rotate_secret', { params: { path: { id: 1 } }, headers: { 'Idempotency-Key': 'r1' }, body: {} }),
      ],
      [
        'a PATCH',
        (t: ReturnType<typeof fakeService>['tillgate']) =>
          t.core.PATCH('/v1.0/codegen/{id}', { params: { path: { id: 1 } }, body: { code_generator: { status: 'inactive' } } }),
      ],
      ['a DELETE', (t: ReturnType<typeof fakeService>['tillgate']) => t.core.DELETE('/v1.0/events/{id}', { params: { path: { id: 1 } } })],
    ])('never %s, which could do its work twice: not after a network failure, not on a 503', async (_, send) => {
      const failure = fakeService([dropped()]);
      await expect(send(failure.tillgate)).rejects.toThrow('fetch failed');
      expect(failure.sent).toHaveLength(1);

      const busy = fakeService([unavailable('1')]);
      expect((await send(busy.tillgate)).status).toBe(503);
      expect([busy.sent.length, busy.waits]).toEqual([1, []]);
    });

    it('not a request the caller aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const { tillgate, sent } = fakeService([new DOMException('aborted', 'AbortError')]);

      await expect(tillgate.core.GET('/v1.0/events', { signal: controller.signal })).rejects.toThrow();
      expect(sent.length).toBeLessThanOrEqual(1);
    });

    it('with retries: 0, nothing', async () => {
      const { tillgate, sent } = fakeService([unavailable('1')], { retries: 0 });
      expect((await tillgate.core.GET('/v1.0/events')).status).toBe(503);
      expect(sent).toHaveLength(1);
    });
  });

  it('knows exactly the core POSTs whose document takes an Idempotency-Key', () => {
    const core = JSON.parse(readFileSync('openapi/core.json', 'utf8'));
    const keyed = Object.entries<any>(core.paths)
      .filter(([, item]) => item.post?.parameters?.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key'))
      .map(([path]) => path);
    expect([...CORE_KEYED_POSTS].sort()).toEqual(keyed.sort());
  });
});
