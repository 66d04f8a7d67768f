import { describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../../functions/data/api-keys.ts';
import { cashierMessage } from '../../../functions/http/hosts/pos.ts';
import type { ErrorCode } from '../../../functions/http/errors.ts';
import { routes } from '../../../functions/routes.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call } from '../../support/http.ts';
import { invoke } from '../../support/invoke.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';

/**
 * Messages that name the actual fault (PRODUCT.md, "Response conventions"), and error answers
 * that carry no ETag.
 */
const ctx = useLocalApi();

const transaction = { site_id: 'S1', pos_transaction_id: '1234' };
const voidWith = (options: Parameters<typeof call>[4]) => call(ctx.api, 'pos', 'POST', '/v2.0/voided_transactions', options);

describe('a token that was sent is never "required": the message names what is wrong with it', () => {
  it.each([
    ['missing', undefined, 'X-Auth-Token header is required'],
    ['empty', '', 'X-Auth-Token header is required'],
    ['malformed', 'Bearer abc', 'X-Auth-Token is malformed: a token is tg_ followed by 43 characters; check that it was copied whole'],
    ['unknown', `tg_${'A'.repeat(43)}`, 'X-Auth-Token is not a known token; check it, or ask the operator for a token'],
  ])('%s', async (_, token, message) => {
    const response = await voidWith({ token, body: { transaction } });
    expect(response.status).toBe(401);
    expect(response.json.transaction.errors).toEqual([{ message }]);
    const cashier = response.json.transaction.display_messages[0].message;
    expect(cashier).toBe("Void refused: the service did not accept this till's API token. Ask a manager to check the till's token.");
  });

  it('revoked', async () => {
    await revokeApiKey(ctx.account.keyId, new Date());
    const response = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events'));
    expect(response.status).toBe(401);
    expect(response.json).toEqual({ errors: [{ message: 'X-Auth-Token was revoked; ask the operator for a new token' }] });
  });

  it('two different tokens', async () => {
    const { handler } = await import('../../../functions/events/list-events.ts');
    const response = await invoke(handler, 'listEvents', '/v1.0/events', { headers: { 'X-Auth-Token': [ctx.account.token, `tg_${'B'.repeat(43)}`] } });
    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body)).toEqual({ errors: [{ message: 'Send one X-Auth-Token header: this request carries several different ones' }] });
  });
});

describe('a charset other than UTF-8 is named as such, not as "must be application/json"', () => {
  it.each([
    ['application/json; charset=iso-8859-1', 'Content-Type charset must be utf-8 (got charset=iso-8859-1): send the body as UTF-8'],
    ['application/json; charset="utf-16"', 'Content-Type charset must be utf-8 (got charset=utf-16): send the body as UTF-8'],
    ['text/plain; charset=utf-8', 'Content-Type must be application/json'],
  ])('%s', async (contentType, message) => {
    const core = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', {
      token: ctx.account.token,
      body: { code_generator: winterPromotion },
      headers: { 'Content-Type': contentType },
    });
    expect(core.status).toBe(415);
    expect(core.json).toEqual({ errors: [{ message }] });
    const pos = await voidWith({ token: ctx.account.token, body: { transaction }, headers: { 'Content-Type': contentType } });
    expect(pos.status).toBe(415);
    expect(pos.json.transaction.errors).toEqual([{ message }]);
  });
});

describe('a date that does not exist is named as such', () => {
  it('business_date 2025-02-30', async () => {
    const response = await voidWith({ token: ctx.account.token, body: { transaction: { ...transaction, business_date: '2025-02-30' } } });
    expect(response.status).toBe(422);
    expect(response.json.transaction.errors).toEqual([
      { message: 'transaction.business_date must be a date that exists: 2025-02-30 is not a day of the calendar' },
    ]);
  });
});

describe('If-Match', () => {
  const create = async () => {
    const response = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
    return response.json.code_generator.id as number;
  };
  const patch = (id: number, ifMatch: string) =>
    call(ctx.api, 'core', 'PATCH', `/v1.0/codegen/${id}`, {
      token: ctx.account.token,
      body: { code_generator: { description: 'changed' } },
      headers: { 'If-Match': ifMatch },
    });

  it.each(['abc', 'W/abc', '"unterminated', 'W/"a" "b"', `"${'a'.repeat(1100)}"`])('that is not an entity tag (%s) answers 400 naming it', async (value) => {
    const response = await patch(await create(), value);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      errors: [{ message: 'If-Match must be * or entity tags as the ETag header sends them, e.g. W/"…" (at most 1024 characters)', field: 'If-Match' }],
    });
  });

  it('the PATCH of a webhook endpoint answers the same 400 for each, and changes nothing', async () => {
    const created = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url: 'https://erp.example.com/tillgate/hooks' } } }),
    );
    expect(created.status, created.text).toBe(201);
    const path = `/v1.0/webhook_endpoints/${created.json.webhook_endpoint.id}`;
    const before = await call(ctx.api, 'core', 'GET', path, { token: ctx.account.token });
    for (const value of ['abc', 'W/abc', '"unterminated', 'W/"a" "b"', `"${'a'.repeat(1100)}"`]) {
      const response = await call(ctx.api, 'core', 'PATCH', path, {
        token: ctx.account.token,
        body: { webhook_endpoint: { description: 'changed' } },
        headers: { 'If-Match': value },
      });
      expect(response.status, value).toBe(400);
      expect(response.json).toEqual({
        errors: [{ message: 'If-Match must be * or entity tags as the ETag header sends them, e.g. W/"…" (at most 1024 characters)', field: 'If-Match' }],
      });
    }
    expect((await call(ctx.api, 'core', 'GET', path, { token: ctx.account.token })).text).toBe(before.text);
  });

  it('a 412 carries no ETag, so a client that retries with the tag of a GET succeeds', async () => {
    const id = await create();
    const failed = await patch(id, 'W/"00000000000000000000000000000000"');
    expect(failed.status).toBe(412);
    expect(failed.headers.get('etag')).toBeNull();
    const current = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen/{id}', { params: { path: { id } } }));
    const retried = await patch(id, current.headers.get('etag')!);
    expect(retried.status).toBe(200);
    // A generator's tag: the hash of what a PATCH sets, then its times_redeemed.
    expect(retried.headers.get('etag')).toMatch(/^W\/"[0-9a-f]{32}\.0"$/);
  });

  it.each(['*', 'W/"x", W/"y"', ' "x" '])('%s is an entity tag list (412 when it does not match, not 400)', async (value) => {
    const response = await patch(await create(), value);
    expect(response.status).toBe(value === '*' ? 200 : 412);
  });
});

describe('pos cashier texts', () => {
  const posRoutes = routes.filter((route) => route.host === 'pos');
  const codes: ErrorCode[] = [
    'bad_request',
    'unauthorized',
    'forbidden',
    'site_not_allowed',
    'not_found',
    'conflict',
    'precondition_failed',
    'payload_too_large',
    'unsupported_media_type',
    'validation_failed',
    'too_many_unknown_codes',
    'service_unavailable',
    'internal_error',
  ];
  /** Faults the same request can get past by being sent again (the guessing limit's after its wait). */
  const retryable = new Set<ErrorCode>(['service_unavailable', 'internal_error', 'too_many_unknown_codes']);

  it.each(posRoutes.map((route) => [route.operationId, route] as const))(
    '%s: each names what the till tried, and only a passing fault says "try again"',
    (operationId, route) => {
      const attempt = route.till;
      expect(attempt, `give ${operationId} a till in functions/routes.ts`).toBeDefined();
      for (const code of codes) {
        const text = cashierMessage(attempt!, code, [{ message: 'transaction.site_id must not be empty' }], 'req-1');
        if (code !== 'not_found') expect(text.toLowerCase(), code).toContain(attempt!.noun);
        expect(/try again|retry/i.test(text), `${code}: ${text}`).toBe(retryable.has(code));
      }
    },
  );

  it('names the operations of the contract: void, redemption, check', () => {
    const nounOf = (operationId: string) => routes.find((route) => route.operationId === operationId)?.till?.noun;
    expect(nounOf('voidTransaction')).toBe('void');
    expect(nounOf('redeemCodes')).toBe('redemption');
    expect(nounOf('validateCodes')).toBe('check');
  });
});
