import { describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../../functions/data/api-keys.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, RFC3339_MILLIS_UTC, UUID } from '../../support/http.ts';
import { winterPromotion, GENERATOR_FIELDS } from '../../support/fixtures.ts';
import { send, type CoreBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeGeneratorsOf, eventsOf } from '../../support/records.ts';

const generator = winterPromotion;

const ctx = useLocalApi();

const create = (body: CoreBody<'createCodeGenerator'>, headers: { 'Idempotency-Key'?: string; 'X-Request-Id'?: string } = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen', { params: { header: headers }, body }));
/** A body, a header or a Content-Type no client would send: raw. */
const createRaw = (body: unknown, headers: Record<string, string> = {}) =>
  call(ctx.api, 'core', 'POST', '/v1.0/codegen', { token: ctx.account.token, body, headers });

describe('POST /v1.0/codegen', () => {
  it('creates a generator: 201, Location, all nineteen fields, and one code_generator.created event', async () => {
    const response = await create({ code_generator: generator });

    expect(response.status).toBe(201);
    const body = response.json.code_generator;
    expect(Object.keys(body)).toEqual(GENERATOR_FIELDS);
    expect(body).toMatchObject({ ...generator, account_id: ctx.account.accountId });
    expect(Number.isSafeInteger(body.id) && body.id > 0).toBe(true);
    expect(body.created_at).toMatch(RFC3339_MILLIS_UTC);
    expect(body.updated_at).toBe(body.created_at);
    expect(response.headers.get('location')).toBe(`/v1.0/codegen/${body.id}`);

    const events = await eventsOf(ctx.account.accountId);
    expect(events.map(({ type, resource_id }) => ({ type, resource_id }))).toEqual([{ type: 'code_generator.created', resource_id: String(body.id) }]);
    expect(await codeGeneratorsOf(ctx.account.accountId)).toHaveLength(1);
  });

  it('sends the core host headers: JSON content type, request id, no-store, weak ETag (with times_redeemed 0), X-Runtime, nosniff', async () => {
    const response = await create({ code_generator: generator });

    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('etag')).toMatch(/^W\/"[0-9a-f]{32}\.0"$/);
    expect(response.headers.get('x-runtime')).toMatch(/^\d+\.\d{6}$/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-powered-by')).toBeNull();
    expect(response.headers.get('server')).toBeNull();
  });

  it('fills the optional fields with their defaults', async () => {
    const response = await create({ code_generator: { generation_type: 'numeric', code_length: 6, store_id: 7 } });

    expect(response.status).toBe(201);
    expect(response.json.code_generator).toMatchObject({
      generation_type: 'numeric',
      buffer_type: 'default',
      code_length: 6,
      description: '',
      prefix: '',
      store_id: 7,
      status: 'active',
    });
  });

  it('gives unique increasing ids across requests', async () => {
    const first = await create({ code_generator: generator });
    const second = await create({ code_generator: generator });
    expect(second.json.code_generator.id).toBeGreaterThan(first.json.code_generator.id);
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const echoed = await create({ code_generator: generator }, { 'X-Request-Id': 'till-7:retry.2' });
    expect(echoed.headers.get('x-request-id')).toBe('till-7:retry.2');

    const replaced = await create({ code_generator: generator }, { 'X-Request-Id': 'not ok <script>' });
    expect(replaced.headers.get('x-request-id')).toMatch(UUID);
  });

  describe('failures answer the core error body and write nothing', () => {
    it.each([
      ['malformed JSON', '{"code_generator":', 'Request body is not valid JSON'],
      ['an empty body', '', 'Request body is required: a JSON object with a "code_generator" object'],
      ['a JSON array', '[1,2]', 'Request body must be a JSON object with a "code_generator" object'],
      ['code_generator not an object', '{"code_generator":"x"}', 'Request body must be a JSON object with a "code_generator" object'],
      ['no code_generator key', '{"generator":{}}', 'Request body must be a JSON object with a "code_generator" object'],
    ])('400 for %s', async (_, body, message) => {
      const response = await createRaw(body);
      expect(response.status).toBe(400);
      expect(response.json.errors[0].message).toBe(message);
      expect(response.json.errors).toHaveLength(1);
      expect(await codeGeneratorsOf(ctx.account.accountId)).toEqual([]);
    });

    it('401 without a token, with an unknown token, and with a revoked token', async () => {
      const missing = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', { body: { code_generator: generator } });
      const unknown = await create({ code_generator: generator }, {}, `tg_${'A'.repeat(43)}`);
      await revokeApiKey(ctx.account.keyId, new Date());
      const revoked = await create({ code_generator: generator });

      // Each names its own fault: a token that was sent is not "required".
      for (const [response, message] of [
        [missing, 'X-Auth-Token header is required'],
        [unknown, 'X-Auth-Token is not a known token; check it, or ask the operator for a token'],
        [revoked, 'X-Auth-Token was revoked; ask the operator for a new token'],
      ] as const) {
        expect(response.status).toBe(401);
        expect(response.json).toEqual({ errors: [{ message }] });
      }
      expect(await codeGeneratorsOf(ctx.account.accountId)).toEqual([]);
    });

    it('413 for a body over 16 KiB', async () => {
      const response = await createRaw({ code_generator: { ...generator, description: 'x'.repeat(17 * 1024) } });
      expect(response.status).toBe(413);
      expect(response.json).toEqual({ errors: [{ message: 'Request body exceeds 16384 bytes' }] });
    });

    it('415 for a body with a non-JSON Content-Type', async () => {
      const response = await createRaw(JSON.stringify({ code_generator: generator }), { 'Content-Type': 'text/plain' });
      expect(response.status).toBe(415);
      expect(response.json).toEqual({ errors: [{ message: 'Content-Type must be application/json' }] });
    });

    it('422 names every field at fault', async () => {
      const response = await createRaw({
        code_generator: {
          generation_type: 'random',
          buffer_type: 'huge',
          code_length: '8',
          description: 'd'.repeat(256),
          prefix: 'win',
          store_id: 0,
          status: 'paused',
          colour: 'red',
          id: 5,
        },
      });

      expect(response.status).toBe(422);
      expect(response.json.errors).toEqual([
        { message: 'code_generator.colour is not a known field', field: 'code_generator.colour' },
        { message: 'code_generator.id is read-only and cannot be set', field: 'code_generator.id' },
        { message: 'code_generator.generation_type must be one of "tillgate", "numeric"', field: 'code_generator.generation_type' },
        { message: 'code_generator.buffer_type must be one of "default"', field: 'code_generator.buffer_type' },
        { message: 'code_generator.code_length must be an integer', field: 'code_generator.code_length' },
        { message: 'code_generator.description must be at most 255 characters', field: 'code_generator.description' },
        { message: 'code_generator.prefix must be up to 16 of A-Z, 0-9 and -', field: 'code_generator.prefix' },
        { message: 'code_generator.store_id must be at least 1', field: 'code_generator.store_id' },
        { message: 'code_generator.status must be one of "active", "inactive"', field: 'code_generator.status' },
      ]);
      expect(await codeGeneratorsOf(ctx.account.accountId)).toEqual([]);
      expect(await eventsOf(ctx.account.accountId)).toEqual([]);
    });

    it.each([
      [{ code_length: 3 }, 'code_generator.code_length must be between 4 and 32'],
      [{ code_length: 33 }, 'code_generator.code_length must be between 4 and 32'],
      [{ code_length: 8.5 }, 'code_generator.code_length must be an integer'],
      [{ store_id: 2 ** 53 }, 'code_generator.store_id must be an integer of at most 9007199254740991 (2^53 - 1)'],
      [{ generation_type: undefined }, 'code_generator.generation_type is required'],
      [{ created_at: '2026-01-01T00:00:00Z' }, 'code_generator.created_at is read-only and cannot be set'],
      [{ times_redeemed: 0 }, 'code_generator.times_redeemed is read-only and cannot be set'],
      [{ prefix: 'ABCDEFGHIJKLMNOPQ' }, 'code_generator.prefix must be up to 16 of A-Z, 0-9 and -'],
    ])('422 for %o', async (change, message) => {
      const response = await createRaw({ code_generator: { ...generator, ...change } });
      expect(response.status).toBe(422);
      expect(response.json.errors.map((e: { message: string }) => e.message)).toEqual([message]);
    });
  });

  describe('Idempotency-Key', () => {
    it('answers a repeat with the first response and creates nothing more', async () => {
      const first = await create({ code_generator: generator }, { 'Idempotency-Key': 'order-81' });
      const repeat = await create({ code_generator: generator }, { 'Idempotency-Key': 'order-81' });

      expect(first.status).toBe(201);
      expect(repeat.status).toBe(201);
      expect(repeat.json).toEqual(first.json);
      expect(repeat.headers.get('location')).toBe(first.headers.get('location'));
      expect(repeat.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(await codeGeneratorsOf(ctx.account.accountId)).toHaveLength(1);
      expect(await eventsOf(ctx.account.accountId)).toHaveLength(1);
    });

    it('treats the same values in another key order as the same request', async () => {
      const { generation_type, buffer_type, code_length, description, prefix, store_id, status } = generator;
      const reordered = { status, store_id, prefix, description, code_length, buffer_type, generation_type };
      const first = await create({ code_generator: generator }, { 'Idempotency-Key': 'k-order' });
      const repeat = await create({ code_generator: reordered }, { 'Idempotency-Key': 'k-order' });
      expect(repeat.json).toEqual(first.json);
    });

    it('409 for the same key with a different body, creating nothing', async () => {
      await create({ code_generator: generator }, { 'Idempotency-Key': 'order-82' });
      const different = await create({ code_generator: { ...generator, code_length: 9 } }, { 'Idempotency-Key': 'order-82' });

      expect(different.status).toBe(409);
      expect(different.json).toEqual({ errors: [{ message: 'Idempotency-Key was already used with a different request body' }] });
      expect(await codeGeneratorsOf(ctx.account.accountId)).toHaveLength(1);
    });

    it('keeps keys per account: another account may use the same key', async () => {
      const other = await newAccount();
      const mine = await create({ code_generator: generator }, { 'Idempotency-Key': 'shared-key' });
      const theirs = await create({ code_generator: generator }, { 'Idempotency-Key': 'shared-key' }, other.token);
      expect(theirs.status).toBe(201);
      expect(theirs.json.code_generator.account_id).toBe(other.accountId);
      expect(theirs.json.code_generator.id).not.toBe(mine.json.code_generator.id);
    });

    it('400 for a key that is not 1 to 255 visible ASCII characters', async () => {
      const response = await createRaw({ code_generator: generator }, { 'Idempotency-Key': 'x'.repeat(256) });
      expect(response.status).toBe(400);
      expect(response.json).toEqual({
        errors: [{ message: 'Idempotency-Key must be 1 to 255 visible ASCII characters', field: 'Idempotency-Key' }],
      });
    });

    it('creates exactly one generator when 10 requests with one key arrive at once', async () => {
      const responses = await Promise.all(Array.from({ length: 10 }, () => create({ code_generator: generator }, { 'Idempotency-Key': 'burst-1' })));
      expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
      expect(new Set(responses.map((r) => r.text)).size).toBe(1);
      expect(await codeGeneratorsOf(ctx.account.accountId)).toHaveLength(1);
      expect(await eventsOf(ctx.account.accountId)).toHaveLength(1);
    });
  });
});
