import { describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { call, RFC3339_MILLIS_UTC, UUID } from '../../support/http.ts';
import { send, type CoreBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeItemsOf, eventsOf } from '../../support/records.ts';

/**
 * Issuing codes and looking them up over HTTP: POST /v1.0/codegen/{id}/codes and
 * GET /v1.0/codegen/{id}/codes/{code}.
 */
const ctx = useLocalApi();

const TILLGATE = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZ]+$/;
const DIGITS = /^[0-9]+$/;
const WEAK_ETAG = /^W\/"[0-9a-f]{32}"$/;
const unauthorized = { errors: [{ message: 'X-Auth-Token header is required' }] };
const badId = { errors: [{ message: 'id must be a positive integer of at most 9007199254740991 (2^53 - 1)', field: 'id' }] };

interface Generator {
  id: number;
  generation_type: 'tillgate' | 'numeric';
  code_length: number;
  prefix: string;
  status: string;
}

const createGenerator = async (fields: Partial<CoreBody<'createCodeGenerator'>['code_generator']> = {}, token = ctx.account.token): Promise<Generator> => {
  const response = await send(ctx.api, token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'WIN-', store_id: 42, ...fields } } }),
  );
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator;
};
const issue = (id: number, body: CoreBody<'issueCodes'>, headers: { 'Idempotency-Key'?: string } = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id }, header: headers }, body }));
const lookUp = (id: number, code: string, headers: { 'If-None-Match'?: string } = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.GET('/v1.0/codegen/{id}/codes/{code}', { params: { path: { id, code }, header: headers } }));
/** Requests no client would send (a bad path id, a code sent pre-encoded, a body the schema refuses, not JSON, a malformed key): raw. */
const issueRaw = (id: number | string, body: unknown, headers: Record<string, string> = {}) =>
  call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/codes`, { token: ctx.account.token, body, headers });
const lookUpRaw = (id: number | string, code: string) => call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes/${code}`, { token: ctx.account.token });
const setStatus = async (id: number, status: 'active' | 'inactive') => {
  const response = await send(ctx.api, ctx.account.token, ({ core }) =>
    core.PATCH('/v1.0/codegen/{id}', { params: { path: { id } }, body: { code_generator: { status } } }),
  );
  expect(response.status, response.text).toBe(200);
};
const feed = async (token = ctx.account.token) => {
  const response = await send(ctx.api, token, ({ core }) => core.GET('/v1.0/events', { params: { query: { limit: 1000 } } }));
  expect(response.status).toBe(200);
  return response.json.events as { id: number; type: string; resource_id: string; created_at: string }[];
};

function expectCodesOf(generator: Generator, codes: string[], count: number) {
  expect(codes).toHaveLength(count);
  expect(new Set(codes).size).toBe(count);
  const alphabet = generator.generation_type === 'numeric' ? DIGITS : TILLGATE;
  for (const code of codes) {
    expect(code.startsWith(generator.prefix), code).toBe(true);
    expect(code).toHaveLength(generator.prefix.length + generator.code_length);
    expect(code.slice(generator.prefix.length), code).toMatch(alphabet);
  }
}

/** What a refused call must leave as it was: the account's code items and events. */
async function tables() {
  const [codes, events] = await Promise.all([codeItemsOf(ctx.account.accountId), eventsOf(ctx.account.accountId)]);
  return { codes: codes.map((c) => c.code_key).sort(), events: events.map((e) => e.id).sort() };
}

describe('POST /v1.0/codegen/{id}/codes', () => {
  it('issues n codes: 201 with the codes, the generator id and issued_at', async () => {
    const generator = await createGenerator();

    const response = await issue(generator.id, { count: 25 });

    expect(response.status, response.text).toBe(201);
    expect(Object.keys(response.json)).toEqual(['codes', 'code_generator_id', 'issued_at']);
    expect(response.json).toEqual({ codes: expect.any(Array), code_generator_id: generator.id, issued_at: expect.stringMatching(RFC3339_MILLIS_UTC) });
    expectCodesOf(generator, response.json.codes, 25);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(response.headers.get('etag')).toMatch(WEAK_ETAG);
    expect(response.headers.get('idempotent-replayed')).toBeNull();
  });

  it('issues digits for a numeric generator, and codes without a prefix when it has none', async () => {
    const numeric = await createGenerator({ generation_type: 'numeric', code_length: 12, prefix: '' });
    const plain = await createGenerator({ code_length: 32, prefix: '' });

    const digits = await issue(numeric.id, { count: 50 });
    const letters = await issue(plain.id, { count: 50 });

    expect([digits.status, letters.status]).toEqual([201, 201]);
    expectCodesOf(numeric, digits.json.codes, 50);
    expectCodesOf(plain, letters.json.codes, 50);
  });

  it('writes one codes.issued event per call, resource_id the generator id, at issued_at', async () => {
    const generator = await createGenerator();

    const first = await issue(generator.id, { count: 1 });
    const second = await issue(generator.id, { count: 3 });

    const issued = (await feed()).filter((e) => e.type === 'codes.issued');
    expect(issued).toHaveLength(2);
    expect(issued.map((e) => e.resource_id)).toEqual([String(generator.id), String(generator.id)]);
    expect(issued.map((e) => e.created_at).sort()).toEqual([first.json.issued_at, second.json.issued_at].sort());
  });

  it('never issues a code twice across calls', async () => {
    const generator = await createGenerator({ code_length: 4 });
    const codes: string[] = [];
    for (let call = 0; call < 5; call++) codes.push(...(await issue(generator.id, { count: 200 })).json.codes);
    expect(new Set(codes).size).toBe(1000);
  });

  it('issues 1000 codes in one call (several DynamoDB transactions): all unique, all readable, one event', async () => {
    const generator = await createGenerator();

    const response = await issue(generator.id, { count: 1000 });

    expect(response.status, response.text).toBe(201);
    expectCodesOf(generator, response.json.codes, 1000);
    // Every 7th code: some of each transaction's codes (the earlier ones are written pending).
    const sample = (response.json.codes as string[]).filter((_, i) => i % 7 === 0 || i === 999);
    const reads = await Promise.all(sample.map((code) => lookUp(generator.id, code)));
    for (const [i, read] of reads.entries()) {
      expect(read.status, sample[i]).toBe(200);
      expect(read.json.code).toEqual({
        code: sample[i],
        code_generator_id: generator.id,
        issued_at: response.json.issued_at,
        redeemed_at: null,
        site_id: null,
        pos_transaction_id: null,
        discount_amount: null,
        currency: null,
        times_redeemed: 0,
        max_redemptions_per_code: 1,
      });
    }
    expect((await feed()).filter((e) => e.type === 'codes.issued')).toHaveLength(1);
    // The codes and the issuance record that makes the earlier transactions' codes count.
    expect((await codeItemsOf(ctx.account.accountId)).filter((item) => item.code !== undefined)).toHaveLength(1000);
  });

  describe('Idempotency-Key', () => {
    it.each([10, 500])('replays the first answer for count %i: same codes, Idempotent-Replayed, nothing written', async (count) => {
      const generator = await createGenerator();
      const first = await issue(generator.id, { count }, { 'Idempotency-Key': 'batch-1' });
      const before = await tables();

      const again = await issue(generator.id, { count }, { 'Idempotency-Key': 'batch-1' });

      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await tables()).toEqual(before);
      expect((await lookUp(generator.id, first.json.codes[0])).json.code.issued_at).toBe(first.json.issued_at);
    });

    it('409 for the same key with another count, writing nothing', async () => {
      const generator = await createGenerator();
      await issue(generator.id, { count: 2 }, { 'Idempotency-Key': 'k-1' });
      const before = await tables();

      const responses = [
        await issue(generator.id, { count: 3 }, { 'Idempotency-Key': 'k-1' }),
        await issue(generator.id, { count: 300 }, { 'Idempotency-Key': 'k-1' }),
      ];

      for (const response of responses) {
        expect(response.status).toBe(409);
        expect(response.json).toEqual({ errors: [{ message: 'Idempotency-Key was already used with a different request body' }] });
      }
      expect(await tables()).toEqual(before);
    });

    it('a key used on another generator of the account is another request: 409', async () => {
      const one = await createGenerator();
      const other = await createGenerator();
      await issue(one.id, { count: 2 }, { 'Idempotency-Key': 'shared' });
      const response = await issue(other.id, { count: 2 }, { 'Idempotency-Key': 'shared' });
      expect(response.status).toBe(409);
    });

    it('keys are per account: another account may use the same key', async () => {
      const generator = await createGenerator();
      const other = await newAccount();
      const theirs = await createGenerator({}, other.token);
      const mine = await issue(generator.id, { count: 2 }, { 'Idempotency-Key': 'same' });
      const their = await issue(theirs.id, { count: 2 }, { 'Idempotency-Key': 'same' }, other.token);
      expect([mine.status, their.status]).toEqual([201, 201]);
      expect(their.headers.get('idempotent-replayed')).toBeNull();
      expect(their.json.codes).not.toEqual(mine.json.codes);
    });

    it('400 for a malformed key', async () => {
      const generator = await createGenerator();
      const response = await issueRaw(generator.id, { count: 1 }, { 'Idempotency-Key': 'a'.repeat(256) });
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errors: [{ message: 'Idempotency-Key must be 1 to 255 visible ASCII characters', field: 'Idempotency-Key' }] });
    });
  });

  describe('failures write nothing', () => {
    it('409 for an inactive generator; issuing works again once it is active', async () => {
      const generator = await createGenerator({ status: 'inactive' });
      const before = await tables();

      const refused = await issue(generator.id, { count: 5 });

      expect(refused.status).toBe(409);
      expect(refused.json).toEqual({ errors: [{ message: `Code generator ${generator.id} is inactive; activate it to issue codes` }] });
      expect(await tables()).toEqual(before);

      await setStatus(generator.id, 'active');
      expect((await issue(generator.id, { count: 5 })).status).toBe(201);
    });

    it('409 once a generator that issued before is made inactive (also for many codes)', async () => {
      const generator = await createGenerator();
      expect((await issue(generator.id, { count: 5 })).status).toBe(201);
      await setStatus(generator.id, 'inactive');
      const before = await tables();

      const small = await issue(generator.id, { count: 5 });
      const large = await issue(generator.id, { count: 400 });

      for (const response of [small, large]) {
        expect(response.status).toBe(409);
        expect(response.json).toEqual({ errors: [{ message: `Code generator ${generator.id} is inactive; activate it to issue codes` }] });
      }
      const after = await tables();
      expect(after.events).toEqual(before.events);
      // A large refused call may leave pending codes behind; none of them reads as issued.
      const issuedNow = (await codeItemsOf(ctx.account.accountId)).filter((item) => item.code !== undefined && !before.codes.includes(item.code_key));
      for (const item of issuedNow.slice(0, 20)) expect((await lookUp(generator.id, item.code)).status).toBe(404);
    });

    it.each([
      ['count 0', { count: 0 }, [{ message: 'count must be between 1 and 1000', field: 'count' }]],
      ['count 1001', { count: 1001 }, [{ message: 'count must be between 1 and 1000', field: 'count' }]],
      ['count "5"', { count: '5' }, [{ message: 'count must be an integer', field: 'count' }]],
      ['count 2.5', { count: 2.5 }, [{ message: 'count must be an integer', field: 'count' }]],
      ['count null', { count: null }, [{ message: 'count must be an integer', field: 'count' }]],
      ['no count', {}, [{ message: 'count is required', field: 'count' }]],
      ['an unknown key', { count: 1, colour: 'red' }, [{ message: 'colour is not a known field', field: 'colour' }]],
    ])('422 for %s, naming the field', async (_, body, errors) => {
      const generator = await createGenerator();
      const before = await tables();
      const response = await issueRaw(generator.id, body);
      expect(response.status).toBe(422);
      expect(response.json).toEqual({ errors });
      expect(await tables()).toEqual(before);
    });

    it.each([
      ['malformed JSON', '{"count":', 'Request body is not valid JSON'],
      ['an empty body', '', 'Request body is required: a JSON object'],
      ['a JSON array', '[5]', 'Request body must be a JSON object'],
      ['a bare number', '5', 'Request body must be a JSON object'],
    ])('400 for %s', async (_, body, message) => {
      const generator = await createGenerator();
      const before = await tables();
      const response = await issueRaw(generator.id, body);
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errors: [{ message }] });
      expect(await tables()).toEqual(before);
    });

    it('400 for a path id that is not a positive integer', async () => {
      for (const id of ['abc', '0', '-1', '1.5']) {
        const response = await issueRaw(id, { count: 1 });
        expect(response.status).toBe(400);
        expect(response.json).toEqual(badId);
      }
    });

    it('401 without a token', async () => {
      const generator = await createGenerator();
      const before = await tables();
      const response = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${generator.id}/codes`, { body: { count: 1 } });
      expect(response.status).toBe(401);
      expect(response.json).toEqual(unauthorized);
      expect(await tables()).toEqual(before);
    });

    it('404 for a missing generator', async () => {
      const generator = await createGenerator();
      const response = await issue(generator.id + 1_000_000, { count: 1 });
      expect(response.status).toBe(404);
      expect(response.json).toEqual({ errors: [{ message: `Code generator ${generator.id + 1_000_000} not found` }] });
    });

    it("404 for another account's generator, writing nothing for either account", async () => {
      const generator = await createGenerator();
      const before = await tables();
      const intruder = await newAccount();

      const response = await issue(generator.id, { count: 1 }, {}, intruder.token);

      expect(response.status).toBe(404);
      expect(response.json).toEqual({ errors: [{ message: `Code generator ${generator.id} not found` }] });
      expect(await tables()).toEqual(before);
      expect(await eventsOf(intruder.accountId)).toEqual([]);
      expect(await codeItemsOf(intruder.accountId)).toEqual([]);
    });

    it('413 for a body over 16 KiB', async () => {
      const generator = await createGenerator();
      const response = await issueRaw(generator.id, `{"count":1,"pad":"${'x'.repeat(17 * 1024)}"}`);
      expect(response.status).toBe(413);
      expect(response.json).toEqual({ errors: [{ message: 'Request body exceeds 16384 bytes' }] });
    });

    it('415 for a body with a non-JSON Content-Type', async () => {
      const generator = await createGenerator();
      const before = await tables();
      const response = await issueRaw(generator.id, '{"count":1}', { 'Content-Type': 'application/x-www-form-urlencoded' });
      expect(response.status).toBe(415);
      expect(response.json).toEqual({ errors: [{ message: 'Content-Type must be application/json' }] });
      expect(await tables()).toEqual(before);
    });
  });
});

describe('GET /v1.0/codegen/{id}/codes/{code}', () => {
  it('returns a code as issued, with the issuing call’s issued_at, and read headers', async () => {
    const generator = await createGenerator();
    const issued = (await issue(generator.id, { count: 3 })).json;

    const response = await lookUp(generator.id, issued.codes[1]);

    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      code: {
        code: issued.codes[1],
        code_generator_id: generator.id,
        issued_at: issued.issued_at,
        redeemed_at: null,
        site_id: null,
        pos_transaction_id: null,
        discount_amount: null,
        currency: null,
        times_redeemed: 0,
        max_redemptions_per_code: 1,
      },
    });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('max-age=0, private, must-revalidate');
    expect(response.headers.get('etag')).toMatch(WEAK_ETAG);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  it('finds a code typed in lower case (or mixed case) and answers it as issued', async () => {
    const generator = await createGenerator({ prefix: 'WIN-' });
    const issued = (await issue(generator.id, { count: 1 })).json;
    const code: string = issued.codes[0];
    const mixed = [...code].map((c, i) => (i % 2 ? c.toLowerCase() : c)).join('');

    for (const typed of [code.toLowerCase(), mixed]) {
      const response = await lookUp(generator.id, typed);
      expect(response.status).toBe(200);
      expect(response.json).toEqual({
        code: {
          code,
          code_generator_id: generator.id,
          issued_at: issued.issued_at,
          redeemed_at: null,
          site_id: null,
          pos_transaction_id: null,
          discount_amount: null,
          currency: null,
          times_redeemed: 0,
          max_redemptions_per_code: 1,
        },
      });
    }
  });

  it('answers 304 for a matching If-None-Match', async () => {
    const generator = await createGenerator();
    const code = (await issue(generator.id, { count: 1 })).json.codes[0];
    const etag = (await lookUp(generator.id, code)).headers.get('etag')!;
    const again = await lookUp(generator.id, code, { 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('404 for a code this generator did not issue, also when another generator of the account did', async () => {
    const generator = await createGenerator({ prefix: '' });
    const sibling = await createGenerator({ prefix: '' });
    const siblingCode = (await issue(sibling.id, { count: 1 })).json.codes[0];
    await issue(generator.id, { count: 1 });

    for (const code of ['ZZZZZZZZ', siblingCode]) {
      const response = await lookUp(generator.id, code);
      expect(response.status).toBe(404);
      expect(response.json).toEqual({ errors: [{ message: `Code ${code} was not issued by code generator ${generator.id}` }] });
    }
  });

  it("404 for another account's code, exactly as for an unknown one", async () => {
    const generator = await createGenerator();
    const code = (await issue(generator.id, { count: 1 })).json.codes[0];
    const intruder = await newAccount();

    const response = await lookUp(generator.id, code, {}, intruder.token);

    expect(response.status).toBe(404);
    expect(response.json).toEqual({ errors: [{ message: `Code ${code} was not issued by code generator ${generator.id}` }] });
  });

  it('404 for a generator that does not exist', async () => {
    const response = await lookUp(999_999_999_999, 'ABCDEFGH');
    expect(response.status).toBe(404);
  });

  it.each([
    ['abc', 'ABCD'],
    ['0', 'ABCD'],
  ])('400 for id %s', async (id, code) => {
    const response = await lookUpRaw(id, code);
    expect(response.status).toBe(400);
    expect(response.json).toEqual(badId);
  });

  // PRODUCT.md: a code this generator did not issue is a 404, however it is spelled.
  it.each([
    ['AB_CD', 'AB_CD'],
    ['AB%20CD', 'AB CD'],
    ['A'.repeat(49), 'A'.repeat(49)],
  ])('404 for a code that cannot have been issued: %s', async (sent, decoded) => {
    const generator = await createGenerator();
    const response = await lookUpRaw(generator.id, sent);
    expect(response.status).toBe(404);
    expect(response.json).toEqual({ errors: [{ message: `Code ${decoded} was not issued by code generator ${generator.id}` }] });
  });

  it('401 without a token', async () => {
    const generator = await createGenerator();
    const code = (await issue(generator.id, { count: 1 })).json.codes[0];
    const response = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${generator.id}/codes/${code}`);
    expect(response.status).toBe(401);
    expect(response.json).toEqual(unauthorized);
  });
});
