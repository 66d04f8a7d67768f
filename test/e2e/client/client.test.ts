import { createServer, connect, type Server, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import createClient from 'openapi-fetch';
import type { CorePaths } from '../../../client/index.ts';
import { testClient } from '../../support/client.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeItemsOf, eventsOf, voidsOf } from '../../support/records.ts';

/**
 * The typed client (client/index.ts) against the local API: what its middleware does for the
 * contract (the one-space DELETE answer, 304, retries after a dropped answer) and its answers typed
 * by status; its retries on an injected 503 are in test/attack/database/client-retries.test.ts. Every
 * answer passes the OpenAPI check (test/support/client.ts), retries included.
 */
const ctx = useLocalApi();
const client = (options?: Parameters<typeof testClient>[2]) => testClient(ctx.api, ctx.account.token, options);

const generatorBody = { code_generator: winterPromotion };
async function newGenerator() {
  const result = await client().core.POST('/v1.0/codegen', { body: generatorBody });
  if (result.status !== 201) throw new Error(`create: ${result.status}`);
  return result.data.code_generator;
}

describe('the one-space answer of a DELETE', () => {
  it('of an event: success, no data, nothing thrown; a second DELETE is a typed 404', async () => {
    await newGenerator();
    const [event] = await eventsOf(ctx.account.accountId);
    const { core } = client();

    const deleted = await core.DELETE('/v1.0/events/{id}', { params: { path: { id: event!.id } } });
    const again = await core.DELETE('/v1.0/events/{id}', { params: { path: { id: event!.id } } });

    expect(deleted).toMatchObject({ status: 200, data: undefined });
    expect(deleted.error).toBeUndefined();
    expect(again.status).toBe(404);
    if (again.status === 404) expect(again.error).toEqual({ errors: [{ message: `Event ${event!.id} not found` }] });
    expect(await eventsOf(ctx.account.accountId)).toEqual([]);
  });

  it('of a webhook endpoint: success, no data, and the endpoint is gone', async () => {
    const { core } = client();
    const created = await core.POST('/v1.0/webhook_endpoints', {
      body: { webhook_endpoint: { url: 'https://hooks.example.com/tillgate', event_types: ['transaction.voided'] } },
    });
    if (created.status !== 201) throw new Error(`create: ${created.status}`);
    const id = created.data.webhook_endpoint.id;

    const deleted = await core.DELETE('/v1.0/webhook_endpoints/{id}', { params: { path: { id } } });

    expect(deleted).toMatchObject({ status: 200, data: undefined });
    expect((await core.GET('/v1.0/webhook_endpoints/{id}', { params: { path: { id } } })).status).toBe(404);
  });

  it('is why the middleware is there: openapi-fetch alone throws on it, after the server deleted', async () => {
    await newGenerator();
    const [event] = await eventsOf(ctx.account.accountId);
    const bare = createClient<CorePaths>({ baseUrl: ctx.api.urls.core, headers: { 'X-Auth-Token': ctx.account.token } });

    await expect(bare.DELETE('/v1.0/events/{id}', { params: { path: { id: event!.id } } })).rejects.toThrow(SyntaxError);
    expect(await eventsOf(ctx.account.accountId)).toEqual([]);
  });
});

describe('304 Not Modified', () => {
  it('a GET with the current ETag in If-None-Match: status 304, neither data nor error; a stale tag gets the body', async () => {
    const { core } = client();
    const { id } = await newGenerator();
    const path = { id: id };
    const first = await core.GET('/v1.0/codegen/{id}', { params: { path } });
    const etag = first.response.headers.get('etag')!;

    const unchanged = await core.GET('/v1.0/codegen/{id}', { params: { path, header: { 'If-None-Match': etag } } });
    const stale = await core.GET('/v1.0/codegen/{id}', { params: { path, header: { 'If-None-Match': 'W/"00000000000000000000000000000000"' } } });

    expect(unchanged.status).toBe(304);
    expect(unchanged.data).toBeUndefined();
    expect(unchanged.error).toBeUndefined();
    expect(unchanged.response.headers.get('etag')).toBe(etag);
    expect(stale.status).toBe(200);
    if (stale.status === 200) expect(stale.data.code_generator.id).toBe(id);
  });
});

describe('retries', () => {
  /**
   * A TCP proxy in front of a host that, once told to `drop(n)`, cuts the connection as each of the
   * next `n` answers starts to come back: the server got the request and did its work, the client
   * never hears of it.
   */
  async function dropper(target: string) {
    const { hostname, port } = new URL(target);
    let left = 0;
    const sockets = new Set<Socket>();
    const server: Server = createServer((downstream) => {
      const upstream = connect(Number(port), hostname);
      for (const socket of [downstream, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => sockets.delete(socket));
      }
      downstream.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => {
        if (left > 0) {
          left -= 1;
          downstream.destroy();
          upstream.destroy();
        } else downstream.write(chunk);
      });
      downstream.on('end', () => upstream.end());
      upstream.on('end', () => downstream.end());
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      drop: (answers: number) => void (left = answers),
      close: () => {
        for (const socket of sockets) socket.destroy();
        return new Promise<void>((done) => server.close(() => done()));
      },
    };
  }

  it('a void whose answer the network dropped: sent again, the first answer replayed, voided once', async () => {
    const pos = await dropper(ctx.api.urls.pos);
    const waits: number[] = [];
    try {
      pos.drop(1);
      const { pos: till } = testClient({ ...ctx.api, urls: { ...ctx.api.urls, pos: pos.url } }, ctx.account.token, {
        retry: { sleep: async (ms) => void waits.push(ms) },
      });

      const result = await till.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: 'S-1', pos_transaction_id: 'P-1', till_id: 'T3' } } });

      expect(result.status).toBe(200);
      expect(result.response.headers.get('idempotent-replayed')).toBe('true');
      if (result.status === 200) expect(result.data.transaction.display_messages[0]?.message).toBe('Transaction P-1 voided');
      expect(waits).toEqual([200]);
      expect(await voidsOf(ctx.account.accountId)).toHaveLength(1);
      expect((await eventsOf(ctx.account.accountId)).filter((event) => event.type === 'transaction.voided')).toHaveLength(1);
    } finally {
      await pos.close();
    }
  });

  it('an issuance with an Idempotency-Key whose answer was dropped: the same codes come back, issued once; without a key it throws', async () => {
    const { id } = await newGenerator();
    const core = await dropper(ctx.api.urls.core);
    try {
      const { core: office } = testClient({ ...ctx.api, urls: { ...ctx.api.urls, core: core.url } }, ctx.account.token);
      const path = { id: id };

      core.drop(1);
      const keyed = await office.POST('/v1.0/codegen/{id}/codes', { params: { path, header: { 'Idempotency-Key': 'batch-1' } }, body: { count: 3 } });
      expect(keyed.status).toBe(201);
      expect(keyed.response.headers.get('idempotent-replayed')).toBe('true');
      const issued = (await codeItemsOf(ctx.account.accountId)).filter((item) => typeof item.code === 'string' && !item.pending).map((item) => item.code);
      if (keyed.status === 201) expect(keyed.data.codes.sort()).toEqual(issued.sort());

      core.drop(1);
      await expect(office.POST('/v1.0/codegen/{id}/codes', { params: { path }, body: { count: 2 } })).rejects.toThrow(TypeError);
      // It was served: the caller cannot tell, which is why it is not repeated.
      expect((await codeItemsOf(ctx.account.accountId)).filter((item) => typeof item.code === 'string' && !item.pending)).toHaveLength(5);
    } finally {
      await core.close();
    }
  });
});

describe('answers typed by status', () => {
  it('core: 404, 422 with the field, 412 on a stale If-Match, 401 for an unknown token', async () => {
    const { core } = client();
    const { id } = await newGenerator();

    const missing = await core.GET('/v1.0/codegen/{id}', { params: { path: { id: id + 1_000_000 } } });
    const invalid = await core.POST('/v1.0/codegen', { body: { code_generator: { ...generatorBody.code_generator, code_length: 2 } } });
    const stale = await core.PATCH('/v1.0/codegen/{id}', {
      params: { path: { id: id }, header: { 'If-Match': 'W/"00000000000000000000000000000000"' } },
      body: { code_generator: { status: 'inactive' } },
    });
    const stranger = await testClient(ctx.api, 'tg_unknown').core.GET('/v1.0/events');

    // @ts-expect-error before narrowing, `data` may be absent (an error status)
    expect(() => missing.data.code_generator).toThrow(TypeError);
    expect(missing.status).toBe(404);
    if (missing.status === 404) expect(missing.error.errors).toEqual([{ message: `Code generator ${id + 1_000_000} not found` }]);
    expect(invalid.status).toBe(422);
    if (invalid.status === 422) expect(invalid.error.errors[0]?.field).toBe('code_generator.code_length');
    expect(stale.status).toBe(412);
    if (stale.status === 412) expect(stale.error.errors[0]?.message).toMatch(/If-Match/);
    expect(stranger.status).toBe(401);
    if (stranger.status === 401) expect(stranger.error.errors[0]?.message).toMatch(/X-Auth-Token/);
  });

  it('pos: a 409 refusal carries the transaction with its errors and cashier messages', async () => {
    const { core, pos } = client();
    const { id } = await newGenerator();
    const issued = await core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: id } }, body: { count: 1 } });
    if (issued.status !== 201) throw new Error(`issue: ${issued.status}`);
    const [code] = issued.data.codes;
    await pos.POST('/v2.0/redeemed_codes', { body: { transaction: { site_id: 'S-1', pos_transaction_id: 'P-1', codes: [code!] } } });

    const refused = await pos.POST('/v2.0/redeemed_codes', { body: { transaction: { site_id: 'S-1', pos_transaction_id: 'P-2', codes: [code!] } } });

    switch (refused.status) {
      case 409:
        expect(refused.error.transaction.errors).toEqual([{ message: `Code ${code} is redeemed by another transaction` }]);
        expect(refused.error.transaction.display_messages.map((message) => message.message_id)).toEqual(['code_already_redeemed']);
        break;
      default:
        throw new Error(`expected 409, got ${refused.status}`);
    }
  });
});
