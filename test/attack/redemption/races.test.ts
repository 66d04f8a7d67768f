import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, type HttpResponse } from '../../support/http.ts';
import { startTestApi } from '../../support/local-api.ts';
import { codeItemsOf, eventsOf, posTransactionsOf } from '../../support/records.ts';
import { fuzzSeed, seededRandom } from '../support.ts';

/**
 * Redemption under races, through the local HTTP server:
 * (a) many tills redeeming one code at once: exactly one succeeds, the others are told it is taken;
 * (b) redemptions racing voids of the same transactions, round after round: either the
 *     redemption commits first and the void releases its codes, or the void commits first and
 *     the redemption answers transaction_voided; never a code held by a voided transaction, and
 *     every released code is redeemable again.
 *
 * Timings and the mix come from a seeded generator: replay a run with FUZZ_SEED=<seed>.
 */
const seed = fuzzSeed();
console.log(`redemption-races: seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/attack/redemption/races.test.ts)`);

type Account = Awaited<ReturnType<typeof newAccount>>;
let api: LocalApi;
let account: Account;
let generatorId: number;
beforeAll(async () => {
  api = await startTestApi();
  account = await newAccount();
  const created = await call(api, 'core', 'POST', '/v1.0/codegen', {
    token: account.token,
    body: { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'RACE-', store_id: 1, description: 'Race promotion' } },
  });
  expect(created.status, created.text).toBe(201);
  generatorId = created.json.code_generator.id;
});
afterAll(() => api?.close());

const issue = async (count: number): Promise<string[]> => {
  const response = await call(api, 'core', 'POST', `/v1.0/codegen/${generatorId}/codes`, { token: account.token, body: { count } });
  expect(response.status, response.text).toBe(201);
  return response.json.codes;
};
const redeem = (site: string, pos: string, codes: string[]) =>
  call(api, 'pos', 'POST', '/v2.0/redeemed_codes', { token: account.token, body: { transaction: { site_id: site, pos_transaction_id: pos, codes } } });
const voidSale = (site: string, pos: string) =>
  call(api, 'pos', 'POST', '/v2.0/voided_transactions', { token: account.token, body: { transaction: { site_id: site, pos_transaction_id: pos } } });
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const ids = (response: HttpResponse) => (response.json.transaction.display_messages as { message_id: string }[]).map((m) => m.message_id);

describe('redemption races', () => {
  it('20 tills redeeming one code at once: exactly one 200, 19 × 409 code_already_redeemed, one holder, one event (5 codes in turn)', async () => {
    const codes = await issue(5);
    for (const [round, code] of codes.entries()) {
      const responses = await Promise.all(Array.from({ length: 20 }, (_, till) => redeem('S-RACE', `A-${round}-${till}`, [code.toLowerCase()])));
      const statuses = responses.map((r) => r.status);
      expect(
        statuses.filter((s) => s >= 500),
        responses.find((r) => r.status >= 500)?.text,
      ).toEqual([]);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      for (const refused of responses.filter((r) => r.status === 409)) expect(ids(refused)).toEqual(['code_already_redeemed']);
      const winner = responses.findIndex((r) => r.status === 200);
      const read = await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId}/codes/${code}`, { token: account.token });
      expect(read.json.code).toMatchObject({ site_id: 'S-RACE', pos_transaction_id: `A-${round}-${winner}` });
    }
    const redeemed = (await eventsOf(account.accountId)).filter((e) => e.type === 'codes.redeemed' && e.resource_id.startsWith('S-RACE/A-'));
    expect(redeemed).toHaveLength(5);
    console.log('redemption-races (a): 5 rounds of 20 tills on one code: 5 × (1 × 200 + 19 × 409)');
  }, 60_000);

  it('redemptions racing voids of the same transactions, many rounds: never a code held by a voided transaction, every released code redeemable again', async () => {
    const rng = seededRandom(seed);
    const ROUNDS = 25;
    const SALES = 4;
    const pool = await issue(ROUNDS * SALES * 3);
    const outcomes = { redeemedFirst: 0, voidFirst: 0, retries: 0, added: 0 };
    const started = performance.now();

    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        Array.from({ length: SALES }, async (_, sale) => {
          const pos = `B-${round}-${sale}`;
          const [one, two, three] = pool.splice(0, 3) as [string, string, string];
          // A redemption, its retry or a second request adding a code, and the void, each after a seeded delay.
          const second = rng.next() < 0.5 ? [one] : [three];
          const delays = [rng.int(0, 12), rng.int(0, 12), rng.int(0, 12)];
          const [first, again, voided] = await Promise.all([
            sleep(delays[0]!).then(() => redeem('S-RACE', pos, [one, two])),
            sleep(delays[1]!).then(() => redeem('S-RACE', pos, second)),
            sleep(delays[2]!).then(() => voidSale('S-RACE', pos)),
          ]);
          for (const response of [first, again, voided]) expect(response.status, response.text).toBeLessThan(500);
          expect(voided.status).toBe(200);
          const released = (voided.json.transaction.display_messages as { message_id: string; message_content: { code?: string } }[])
            .filter((m) => m.message_id === 'code_released')
            .map((m) => m.message_content.code);
          // A redemption that answered 200 committed before the void: the void released its codes.
          for (const [response, codes] of [
            [first, [one, two]],
            [again, second],
          ] as const) {
            if (response.status === 200) {
              for (const code of codes) expect(released, `${pos}: ${code} redeemed (200) but not released by the void`).toContain(code);
              outcomes.redeemedFirst++;
            } else {
              expect(response.status, response.text).toBe(409);
              // No other transaction holds these codes: a refusal can only be the void's.
              expect(ids(response), response.text).toEqual(['transaction_voided']);
              outcomes.voidFirst++;
            }
          }
          if (again.status === 200 && second[0] === three) outcomes.added++;
          if (again.status === 200 && second[0] === one) outcomes.retries++;
          // Released codes are exactly the ones some 200 redeemed.
          const redeemedCodes = new Set([...(first.status === 200 ? [one, two] : []), ...(again.status === 200 ? second : [])]);
          expect(new Set(released)).toEqual(redeemedCodes);
        }),
      );
    }
    const seconds = (performance.now() - started) / 1000;

    // No code is held by a voided transaction: every transaction here was voided, so no code is held.
    const held = (await codeItemsOf(account.accountId)).filter((item) => item.holder !== undefined && String(item.pos_transaction_id).startsWith('B-'));
    expect(held.map((item) => `${item.code} held by ${item.pos_transaction_id}`)).toEqual([]);
    const transactions = (await posTransactionsOf(account.accountId)).filter((t) => t.pos_transaction_id.startsWith('B-'));
    expect(transactions).toHaveLength(ROUNDS * SALES);
    expect(transactions.filter((t) => t.voided_at === undefined)).toEqual([]);
    // Every code of the rounds is redeemable again, by another transaction.
    const all = (await codeItemsOf(account.accountId)).filter((item) => item.code?.startsWith('RACE-') && item.holder === undefined);
    const again = await Promise.all(
      Array.from({ length: Math.ceil(all.length / 10) }, (_, i) =>
        redeem(
          'S-AGAIN',
          `C-${i}`,
          all.slice(i * 10, i * 10 + 10).map((item) => item.code),
        ),
      ),
    );
    expect(
      again.map((r) => r.status).filter((s) => s !== 200),
      again.find((r) => r.status !== 200)?.text,
    ).toEqual([]);
    console.log(
      `redemption-races (b): ${ROUNDS} rounds × ${SALES} sales (a redemption, a retry or added code, a void, seeded delays 0–12 ms) in ${seconds.toFixed(1)} s: ${outcomes.redeemedFirst} redemptions before their void, ${outcomes.voidFirst} refused as voided; ${all.length} codes redeemable again`,
    );
    expect(outcomes.redeemedFirst).toBeGreaterThan(0);
    expect(outcomes.voidFirst).toBeGreaterThan(0);
  }, 90_000);
});
