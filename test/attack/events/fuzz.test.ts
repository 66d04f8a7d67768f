import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { call } from '../../support/http.ts';
import { startTestApi } from '../../support/local-api.ts';
import { eventsOf } from '../../support/records.ts';
import { authenticated, callers, expectRequestIdHandled, headerChoice, openCallers, rawHeaders, type Account } from '../fuzz/requests.ts';
import { listProperty, openShop } from '../fuzz/shop.ts';
import { MAX_BODY_BYTES } from '../http/oracle.ts';
import { expectClientError, expectStandardHeaders, fuzzRuns, fuzzSeed, gatewayAnswer, sendTo } from '../support.ts';
import { eventPathTarget } from './oracle.ts';

/**
 * Property-based attacks on the event routes through the local server: GET and DELETE
 * /v1.0/events/{id} with every header generated (fuzz/requests.ts), judged with oracle.ts and
 * the tables read back; and, on the shop of fuzz/shop.ts, the feed's query strings (limit, cursors
 * real, foreign and tampered, unknown and repeated parameters).
 *
 * Replay a failure with FUZZ_SEED=<seed printed below>; scale with FUZZ_RUNS=<runs per property>.
 */
const seed = fuzzSeed();
const routeRuns = fuzzRuns(400);
const numRuns = fuzzRuns(80);
console.log(
  `fuzz events: seed ${seed}, ${2 * routeRuns} runs for GET and DELETE /v1.0/events/{id}, ${numRuns} for the feed (replay: FUZZ_SEED=${seed} npx vitest run test/attack/events/fuzz.test.ts)`,
);
fc.configureGlobal({ seed, numRuns, endOnFailure: false });

let api: LocalApi;
beforeAll(async () => {
  api = await startTestApi();
  await openCallers();
  await openShop(api);
});
afterAll(() => api?.close());

describe('fuzzing the event routes through the local server', { timeout: 180_000 }, () => {
  it(`GET and DELETE /v1.0/events/{id}: ${2 * routeRuns} generated requests (both routes), 4xx or the caller's live event`, async () => {
    const account = await newAccount();
    callers.owner = account;
    // Events to find and delete: the owner's, and one of the stranger's.
    for (let i = 0; i < 8; i++) {
      await call(api, 'core', 'POST', '/v1.0/codegen', {
        token: account.token,
        body: { code_generator: { generation_type: 'numeric', code_length: 6, store_id: i + 1 } },
      });
    }
    await call(api, 'core', 'POST', '/v1.0/codegen', {
      token: callers.stranger.token,
      body: { code_generator: { generation_type: 'numeric', code_length: 6, store_id: 1 } },
    });
    const live = new Map((await eventsOf(account.accountId)).map((e) => [e.id, e]));
    const strangersLive = new Map((await eventsOf(callers.stranger.accountId)).map((e) => [e.id, e]));
    const strangers = [...strangersLive.keys()];
    const ownIds = [...live.keys()];
    const deleted = new Set<number>();
    const liveOf = (caller: Account) => (caller === callers.owner ? live : strangersLive);

    const id = fc.oneof(
      { arbitrary: fc.constantFrom(...ownIds, ...strangers).map(String), weight: 6 },
      { arbitrary: fc.constantFrom(...ownIds).map((n) => `%3${String(n)[0]}${String(n).slice(1)}`), weight: 1 },
      { arbitrary: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map(String), weight: 2 },
      {
        arbitrary: fc.constantFrom(
          '0',
          '-1',
          '00',
          '01',
          '+1',
          '1.0',
          '1e3',
          '0x10',
          '9007199254740991',
          '9007199254740992',
          '99999999999999999',
          '1'.repeat(400),
          '%20',
          '%2F',
          '1%2F2',
          '%00',
          '%',
          '%zz',
          '%E0%A4%A',
          '%F0%9F%98%80',
          '..',
          '.',
          '%2e%2e',
          '1;drop',
          'null',
          'undefined',
          '__proto__',
          'constructor',
          '1?x=1',
          '1#frag',
        ),
        weight: 3,
      },
      { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeURIComponent), weight: 2 },
      { arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), weight: 1 },
    );
    const method = fc.oneof(
      { arbitrary: fc.constantFrom('GET', 'DELETE'), weight: 20 },
      { arbitrary: fc.constantFrom('POST', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'), weight: 2 },
    );
    const body = fc.option(fc.oneof(fc.string({ maxLength: 50 }), fc.constant('x'.repeat(MAX_BODY_BYTES + 1))), { nil: undefined });

    await fc.assert(
      fc.asyncProperty(headerChoice, id, method, body, async (h, idText, verb, text) => {
        const path = `/v1.0/events/${idText}`;
        const response = await sendTo(api, 'core', { method: verb, path, headers: rawHeaders(h), body: text });
        const caller = authenticated(h.token);
        const target = eventPathTarget(path);
        let expected: number;
        const isEventRoute = verb === 'GET' || verb === 'DELETE';
        if (!isEventRoute || target.kind === 'no-route') expected = gatewayAnswer('core', verb, path) ?? 404;
        else if (!caller) expected = 401;
        else if (target.kind === 'bad-id') expected = 400;
        else if (liveOf(caller).has(target.id) && !deleted.has(target.id)) expected = 200;
        else expected = 404;

        expect(response.status, `${verb} ${path} → ${response.text}`).toBe(expected);
        if (expected !== 200) {
          expectClientError('core', response, verb);
          if (isEventRoute && target.kind !== 'no-route') expectRequestIdHandled(h, response);
        } else {
          expectStandardHeaders(response);
          expectRequestIdHandled(h, response);
          const event = liveOf(caller!).get((target as { id: number }).id)!;
          if (verb === 'GET') {
            expect(response.json).toEqual({
              event: { id: event.id, type: event.type, resource_id: event.resource_id, created_at: event.created_at },
            });
          } else {
            expect(response.text).toBe(' ');
            deleted.add(event.id);
          }
        }
        const ownerDeleted = [...deleted].filter((d) => live.has(d)).length;
        expect(await eventsOf(account.accountId)).toHaveLength(live.size - ownerDeleted);
      }),
      { numRuns: 2 * routeRuns },
    );

    const strangerDeleted = [...deleted].filter((d) => strangersLive.has(d)).length;
    expect(await eventsOf(callers.stranger.accountId)).toHaveLength(strangers.length - strangerDeleted);
    console.log(`fuzz getEvent/deleteEvent: ${2 * routeRuns} runs, ${deleted.size} of ${live.size + strangers.length} events acknowledged`);
  });

  it(`GET /v1.0/events: ${numRuns} generated query strings, 400 naming the parameter or a page of the caller's live events`, () =>
    listProperty('events', numRuns));
});
