import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostId } from '../../../functions/routes.ts';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { call } from '../../support/http.ts';
import { startTestApi } from '../../support/local-api.ts';
import { checkAgainstOpenApi } from '../../support/openapi.ts';
import { eventsOf, voidsOf } from '../../support/records.ts';
import { authenticated, callers, expectRequestIdHandled, headerChoice, openCallers, rawHeaders, textBodies } from '../fuzz/requests.ts';
import {
  bodies,
  bodyStatus,
  callerOf,
  contentType,
  core,
  createGenerator,
  eventsSummary,
  generators,
  issued,
  openShop,
  owner,
  stranger,
  tokenChoice,
  tokenHeaders,
  type Account,
} from '../fuzz/shop.ts';
import { MAX_BODY_BYTES, isJsonContentType, trimOws } from '../http/oracle.ts';
import { expectClientError, expectStandardHeaders, fuzzRuns, fuzzSeed, gatewayAnswer, sendTo } from '../support.ts';
import { judgeRedemption, judgeTill, judgeVoid, type RedemptionBody, type TillModel } from './oracle.ts';

/**
 * Property-based attacks on the till's routes through the local server: POST
 * /v2.0/voided_transactions with every header generated (fuzz/requests.ts), then, on the shop of
 * fuzz/shop.ts, redemptions, checks and voids of the same transactions (POST /v2.0/redeemed_codes,
 * /v2.0/validated_codes, /v2.0/voided_transactions) judged against a model of who holds which
 * code. Each property judges the answer with oracle.ts (written from PRODUCT.md) and reads the
 * tables back: a failed request writes nothing.
 *
 * Replay a failure with FUZZ_SEED=<seed printed below>; scale with FUZZ_RUNS=<runs per property>.
 */
const seed = fuzzSeed();
const routeRuns = fuzzRuns(400);
const numRuns = fuzzRuns(80);
console.log(
  `fuzz redemption: seed ${seed}, ${routeRuns} runs for POST /v2.0/voided_transactions, ${numRuns} for the till (replay: FUZZ_SEED=${seed} npx vitest run test/attack/redemption/fuzz.test.ts)`,
);
fc.configureGlobal({ seed, numRuns, endOnFailure: false });

let api: LocalApi;
beforeAll(async () => {
  api = await startTestApi();
  await openCallers();
  await openShop(api);
});
afterAll(() => api?.close());

describe('fuzzing the till routes through the local server', { timeout: 180_000 }, () => {
  it(`POST /v2.0/voided_transactions: ${routeRuns} generated requests, 4xx or a correct 200, nothing written on failure`, async () => {
    const host: HostId = 'pos';
    const path = '/v2.0/voided_transactions';
    const account = await newAccount();
    callers.owner = account;
    const voided = new Map<string, string>();
    const idText = fc.oneof(
      { arbitrary: fc.constantFrom('1', '2', 'site-1', '1234'), weight: 3 },
      { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 128 }), weight: 1 },
    );
    const optionalText = fc.string({ unit: 'binary', maxLength: 128 });
    const validVoid = fc.record(
      {
        site_id: idText,
        pos_transaction_id: idText,
        occurred_at: fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
        business_date: fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
        register_id: optionalText,
        operator_id: optionalText,
        till_id: fc.constant(null),
        table_id: optionalText,
        posagent_version: optionalText,
        pos_vendor: optionalText,
        pos_version: optionalText,
        receipt_id: optionalText,
        unknown_future_field: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ['site_id', 'pos_transaction_id'] },
    );
    const fields = ['site_id', 'pos_transaction_id', 'occurred_at', 'business_date', 'register_id', 'receipt_id', 'till_id'];
    const method = fc.oneof({ arbitrary: fc.constant('POST'), weight: 20 }, { arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'), weight: 1 });
    let events = 0;

    await fc.assert(
      fc.asyncProperty(headerChoice, textBodies('transaction', validVoid, fields), method, async (h, body, verb) => {
        const response = await sendTo(api, host, { method: verb, path, headers: rawHeaders(h), body });
        const caller = authenticated(h.token);
        const bytes = Buffer.byteLength(body, 'utf8');
        let expected: number | 'voided' | 'undecided';
        let voidKey: string | undefined;
        if (verb !== 'POST') expected = gatewayAnswer(host, verb, path) ?? 404;
        else if (!caller) expected = 401;
        else if (bytes > MAX_BODY_BYTES) expected = 413;
        else if (h.contentType !== undefined && !isJsonContentType(trimOws(h.contentType))) expected = 415;
        else {
          const verdict = judgeVoid(body);
          if (verdict.kind === 'malformed') expected = 400;
          else if (verdict.kind === 'invalid') expected = 422;
          else if (verdict.kind === 'undecided') expected = 'undecided';
          else {
            expected = 'voided';
            voidKey = JSON.stringify([caller.accountId, verdict.value.site_id, verdict.value.pos_transaction_id]);
          }
        }
        if (expected === 'undecided') expected = response.status === 422 ? 422 : 'voided';

        if (expected !== 'voided') {
          expect(response.status, `${body.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBe(expected);
          expectClientError(host, response, verb);
          if (verb === 'POST') expectRequestIdHandled(h, response);
          expect(await eventsOf(account.accountId)).toHaveLength(events);
          return;
        }

        expect(response.status, `${body.slice(0, 300)} → ${response.text.slice(0, 300)}`).toBe(200);
        expectStandardHeaders(response);
        expectRequestIdHandled(h, response);
        expect(response.json.transaction.errors).toEqual([]);
        const first = voidKey ? voided.get(voidKey) : undefined;
        if (first !== undefined) {
          expect(response.text).toBe(first);
        } else {
          voided.set(voidKey!, response.text);
          if (caller === callers.owner) events += 1;
        }
        expect(await eventsOf(account.accountId)).toHaveLength(events);
      }),
      { numRuns: routeRuns },
    );

    const records = await voidsOf(account.accountId);
    const ownerPrefix = `[${account.accountId},`;
    expect(records.map((r) => r.transaction_key).sort()).toEqual([...voided.keys()].filter((k) => k.startsWith(ownerPrefix)).sort());
    const recorded = await eventsOf(account.accountId);
    expect(recorded.map((e) => e.id).sort()).toEqual(records.map((r) => r.event_id).sort());
    console.log(`fuzz voidTransaction: ${routeRuns} runs, ${records.length} voids recorded`);
  });

  it(`POST /v2.0/redeemed_codes and /v2.0/validated_codes: ${numRuns} generated bodies and voids, judged against a model of who holds which code`, async () => {
    // The owner's codes: an active generator's, and an inactive one's (issued before it stopped).
    const active = await createGenerator(owner, { generation_type: 'tillgate', code_length: 6, prefix: 'TG-', store_id: 9, description: 'till fuzz' });
    const stopped = await createGenerator(owner, { generation_type: 'numeric', code_length: 6, store_id: 9 });
    for (const [generator, count] of [
      [active, 40],
      [stopped, 5],
    ] as const) {
      const response = await call(api, core, 'POST', `/v1.0/codegen/${generator.id}/codes`, { token: owner.token, body: { count } });
      expect(response.status, response.text).toBe(201);
      issued.set(generator.id, new Set(response.json.codes));
    }
    const patched = await call(api, core, 'PATCH', `/v1.0/codegen/${stopped.id}`, { token: owner.token, body: { code_generator: { status: 'inactive' } } });
    expect(patched.status).toBe(200);
    const strangerCodes = [...issued.get(generators.get(stranger.accountId)![0]!.id)!];
    const ownCodes = [...issued.get(active.id)!, ...issued.get(stopped.id)!];
    const models = new Map<number, TillModel>();
    const modelOf = (account: Account, codes: Map<string, { generatorId: number; active: boolean }>) =>
      models.set(account.accountId, { codes, holders: new Map(), held: new Map(), voided: new Set<string>() });
    modelOf(
      owner,
      new Map(
        ownCodes.map((code) => [code, { generatorId: issued.get(active.id)!.has(code) ? active.id : stopped.id, active: issued.get(active.id)!.has(code) }]),
      ),
    );
    modelOf(stranger, new Map(strangerCodes.map((code) => [code, { generatorId: generators.get(stranger.accountId)![0]!.id, active: true }])));
    // One transaction of each account is voided before anything is redeemed on it.
    for (const account of [owner, stranger]) {
      const voided = await call(api, 'pos', 'POST', '/v2.0/voided_transactions', {
        token: account.token,
        body: { transaction: { site_id: 'FZ-SITE', pos_transaction_id: 'F-VOID' } },
      });
      expect(voided.status).toBe(200);
      (models.get(account.accountId)!.voided as Set<string>).add(JSON.stringify(['FZ-SITE', 'F-VOID']));
    }

    const mixCase = (code: string, mask: number) => [...code].map((c, i) => ((mask >> i) & 1 ? c.toLowerCase() : c)).join('');
    const codeChoice = fc.oneof(
      { arbitrary: fc.tuple(fc.constantFrom(...ownCodes), fc.nat()).map(([code, mask]) => mixCase(code, mask)), weight: 10 },
      { arbitrary: fc.constantFrom(...strangerCodes), weight: 2 },
      {
        arbitrary: fc.oneof(
          fc.constantFrom(
            'TG-ıııııı',
            'tg-ıııııı',
            '__proto__',
            'constructor',
            ' ',
            'TG-',
            '-',
            '*',
            "TG-'OR'1",
            'A'.repeat(64),
            'ß',
            '\u0000',
            '😀',
            'TG-\u212a',
          ),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }),
          fc.constantFrom(...ownCodes).map((code) => ` ${code}`),
        ),
        weight: 3,
      },
    );
    const validRedemption = fc.record({
      site_id: fc.oneof(
        { arbitrary: fc.constant('FZ-SITE'), weight: 6 },
        { arbitrary: fc.constantFrom('a/b', 'Zürich 1', '😀', ' ', '\ud800', 'x\udfff'), weight: 1 },
      ),
      pos_transaction_id: fc.constantFrom('F-1', 'F-2', 'F-3', 'F-4', 'F-VOID'),
      codes: fc.oneof(
        // Mostly the owner's own codes, so that sales fill up, collide and get voided.
        {
          arbitrary: fc.array(
            fc.tuple(fc.constantFrom(...ownCodes), fc.nat()).map(([code, mask]) => mixCase(code, mask)),
            { minLength: 1, maxLength: 4 },
          ),
          weight: 3,
        },
        { arbitrary: fc.array(codeChoice, { minLength: 1, maxLength: 10 }), weight: 2 },
      ),
    });
    const action = fc.oneof(
      { arbitrary: fc.constant('redeem' as const), weight: 6 },
      { arbitrary: fc.constant('validate' as const), weight: 3 },
      { arbitrary: fc.constant('void' as const), weight: 1 },
    );
    const statuses = new Map<string, number>();
    let redeemedCodes = 0;
    let released = 0;

    await fc.assert(
      fc.asyncProperty(
        tokenChoice,
        action,
        bodies('transaction', validRedemption, ['site_id', 'pos_transaction_id', 'codes', 'till_id']),
        contentType,
        async (token, what, bytes, type) => {
          const caller = callerOf(token);
          const path = what === 'redeem' ? '/v2.0/redeemed_codes' : what === 'validate' ? '/v2.0/validated_codes' : '/v2.0/voided_transactions';
          const headers = [...tokenHeaders(token)];
          if (type !== undefined) headers.push('Content-Type', type);
          const eventsBefore = caller ? await eventsSummary(caller) : [];
          const response = await sendTo(api, 'pos', { method: 'POST', path, headers, body: bytes });
          const where = `POST ${path} (${token}, ${type}) ${bytes.toString('utf8').slice(0, 300)} → ${response.status} ${response.text.slice(0, 400)}`;
          statuses.set(`${what} ${response.status}`, (statuses.get(`${what} ${response.status}`) ?? 0) + 1);
          expect(response.status, where).toBeLessThan(500);
          const headersSeen = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            if (value !== undefined) headersSeen.set(name, Array.isArray(value) ? value.join(', ') : value);
          checkAgainstOpenApi('pos', 'POST', path, { status: response.status, headers: headersSeen, text: response.text });
          if (!caller) {
            expect(response.status, where).toBe(401);
            expectClientError('pos', response, 'POST');
            return;
          }
          const verdict = judgeRedemption(bytes, type);
          const eventsAfter = async () => (await eventsSummary(caller)).filter((e) => !eventsBefore.includes(e));
          if (what === 'void') {
            // A void's body is judged by the void's own fuzzer: here only what it releases matters.
            if (response.status !== 200) {
              expect(await eventsAfter(), where).toEqual([]);
              return;
            }
            const model = models.get(caller.accountId)!;
            const sent = JSON.parse(bytes.toString('utf8')).transaction;
            const me = JSON.stringify([sent.site_id, sent.pos_transaction_id]);
            const messages = response.json.transaction.display_messages as { message_id: string; message_content: { code?: string } }[];
            expect(messages[0]!.message_id, where).toBe('transaction_voided');
            const replayed = response.headers['idempotent-replayed'] === 'true';
            if (!replayed) {
              expect(
                messages.slice(1).map((m) => m.message_content.code),
                where,
              ).toEqual(model.held.get(me) ?? []);
              for (const code of model.held.get(me) ?? []) model.holders.delete(code);
              released += model.held.get(me)?.length ?? 0;
              model.held.delete(me);
              (model.voided as Set<string>).add(me);
            } else expect(model.voided.has(me), where).toBe(true);
            return;
          }
          const generic = bodyStatus(verdict, true, undefined);
          if (generic !== 'success') {
            expect(response.status, where).toBe(generic);
            expectClientError('pos', response, 'POST');
            expect(await eventsAfter(), where).toEqual([]);
            return;
          }
          const body = (verdict as { value: unknown }).value as RedemptionBody;
          const model = models.get(caller.accountId)!;
          const judged = judgeTill(body, model);
          const display = response.json?.transaction?.display_messages as {
            message: string;
            message_id: string;
            message_content: Record<string, unknown>;
            priority: number;
          }[];
          if (judged.kind === 'refused') {
            expect(response.status, where).toBe(judged.status);
            expectStandardHeaders(response);
            expect(
              display.map((m) => m.message_id),
              where,
            ).toEqual(judged.messageIds);
            expect(response.json.transaction.errors, where).toHaveLength(judged.messageIds.length);
            for (const m of display) expect(m.priority).toBe(1);
            expect(await eventsAfter(), where).toEqual([]);
            return;
          }
          expect(response.status, where).toBe(200);
          expectStandardHeaders(response);
          expect(response.json.transaction.errors).toEqual([]);
          expect(
            display.map((m) => m.message_content.code),
            where,
          ).toEqual(judged.codes);
          expect(new Set(display.map((m) => m.message_id)), where).toEqual(new Set([what === 'redeem' ? 'code_redeemed' : 'code_valid']));
          for (const m of display) expect(m.message_content.code_generator_id, where).toBe(model.codes.get(m.message_content.code as string)!.generatorId);
          const added = await eventsAfter();
          if (what === 'validate' || judged.fresh.length === 0) expect(added, where).toEqual([]);
          else {
            expect(added, where).toHaveLength(1);
            expect(added[0], where).toMatch(/^\d+:codes\.redeemed:/);
            const me = JSON.stringify([body.site_id, body.pos_transaction_id]);
            for (const code of judged.fresh) model.holders.set(code, me);
            model.held.set(me, [...(model.held.get(me) ?? []), ...judged.fresh]);
            redeemedCodes += judged.fresh.length;
          }
        },
      ),
    );
    // The tables agree with the model: each of the owner's codes is held by the transaction the model says, or by none.
    const holders = models.get(owner.accountId)!.holders;
    for (const code of ownCodes) {
      const read = await call(api, core, 'GET', `/v1.0/codegen/${models.get(owner.accountId)!.codes.get(code)!.generatorId}/codes/${code}`, {
        token: owner.token,
      });
      const holder = holders.get(code);
      expect(read.json.code, code).toMatchObject(
        holder === undefined
          ? { site_id: null, pos_transaction_id: null, redeemed_at: null }
          : { site_id: JSON.parse(holder)[0], pos_transaction_id: JSON.parse(holder)[1] },
      );
    }
    console.log(`fuzz till: ${numRuns} runs, ${redeemedCodes} codes redeemed, ${released} released, statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});
