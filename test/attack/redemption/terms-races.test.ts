import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, type HttpResponse } from '../../support/http.ts';
import { startTestApi } from '../../support/local-api.ts';
import { codeItemsOf } from '../../support/records.ts';
import { fuzzSeed, seededRandom } from '../support.ts';

/**
 * Tills redeeming while the back office changes the promotion's terms (PRODUCT.md "Promotion
 * terms": a change takes effect at once). Tills redeem fresh codes at seeded pauses; at a seeded
 * moment a PATCH ends the promotion (valid_until in the past), removes a site, or deactivates it.
 * Every redemption sent after the PATCH's 200 reached the test (so it committed after it) must be
 * refused by the new terms; those in flight may go either way; nothing answers 5xx; what the
 * answers say is what the codes table holds. Replay a run with FUZZ_SEED=<seed>.
 */
const seed = fuzzSeed();
console.log(`terms-races: seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/attack/redemption/terms-races.test.ts)`);

type Account = Awaited<ReturnType<typeof newAccount>>;
let api: LocalApi;
let account: Account;
beforeAll(async () => {
  api = await startTestApi();
  account = await newAccount();
});
afterAll(() => api?.close());

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const ids = (response: HttpResponse) => (response.json.transaction.display_messages as { message_id: string }[]).map((m) => m.message_id);

interface Attempt {
  readonly code: string;
  readonly site: string;
  readonly sentAt: number;
  readonly response: HttpResponse;
}

const CHANGES = [
  { name: 'valid_until moved to the past', patch: { valid_until: '2020-01-01T00:00:00.000Z' }, refusedAt: ['S-A', 'S-B'], id: 'code_expired' },
  { name: 'site S-B removed', patch: { site_ids: ['S-A'] }, refusedAt: ['S-B'], id: 'code_not_valid_at_site' },
  { name: 'deactivated', patch: { status: 'inactive' }, refusedAt: ['S-A', 'S-B'], id: 'code_generator_inactive' },
] as const;

describe('tills redeeming while a PATCH changes the terms', () => {
  it('no redemption sent after the PATCH answered 200 passes under the old terms (3 changes × 2 rounds, 8 tills)', async () => {
    const rng = seededRandom(seed);
    const TILLS = 8;
    const RESERVE = 60;
    const summary: string[] = [];
    for (const [round, change] of [...CHANGES, ...CHANGES].entries()) {
      const created = await call(api, 'core', 'POST', '/v1.0/codegen', {
        token: account.token,
        body: {
          code_generator: {
            generation_type: 'tillgate',
            code_length: 8,
            prefix: `TR${round}-`,
            store_id: 1,
            description: 'Terms race',
            site_ids: ['S-A', 'S-B'],
            valid_until: '2099-01-01T00:00:00.000Z',
            discount: { type: 'percent', percent_off: 10 },
          },
        },
      });
      expect(created.status, created.text).toBe(201);
      const id = created.json.code_generator.id as number;
      const issued = await call(api, 'core', 'POST', `/v1.0/codegen/${id}/codes`, { token: account.token, body: { count: 160 } });
      expect(issued.status, issued.text).toBe(201);
      const pool = [...(issued.json.codes as string[])];

      const attempts: Attempt[] = [];
      let patchedAt = Number.POSITIVE_INFINITY;
      let stopAt = Number.POSITIVE_INFINITY;
      let sentAfter = 0;
      const till = async (n: number) => {
        // Until the pool ends, or a while after the PATCH once enough redemptions followed its 200.
        while (pool.length > 0 && !(performance.now() > stopAt && sentAfter >= 3 * TILLS)) {
          // Codes kept for after the PATCH's 200, however long it takes on a busy machine.
          if (patchedAt === Number.POSITIVE_INFINITY && pool.length <= RESERVE) {
            await sleep(5);
            continue;
          }
          const code = pool.shift()!;
          const site = rng.next() < 0.5 ? 'S-A' : 'S-B';
          const sentAt = performance.now();
          if (sentAt > patchedAt) sentAfter++;
          const response = await call(api, 'pos', 'POST', '/v2.0/redeemed_codes', {
            token: account.token,
            body: { transaction: { site_id: site, pos_transaction_id: `R${round}-${n}-${code}`, codes: [code], basket: { total: 1000, currency: 'EUR' } } },
          });
          attempts.push({ code, site, sentAt, response });
          await sleep(rng.int(0, 8));
        }
      };
      const changer = async () => {
        await sleep(rng.int(40, 200));
        const patched = await call(api, 'core', 'PATCH', `/v1.0/codegen/${id}`, { token: account.token, body: { code_generator: change.patch } });
        expect(patched.status, patched.text).toBe(200);
        patchedAt = performance.now();
        // Keep the tills going a while after the change, so that many requests follow it.
        stopAt = patchedAt + rng.int(150, 300);
      };
      await Promise.all([...Array.from({ length: TILLS }, (_, n) => till(n)), changer()]);

      const after = attempts.filter((a) => a.sentAt > patchedAt);
      const wrong = after.filter((a) => (change.refusedAt as readonly string[]).includes(a.site) && a.response.status !== 409);
      expect(
        wrong.map((a) => `${a.code} at ${a.site}, sent ${(a.sentAt - patchedAt).toFixed(1)} ms after the PATCH's 200: ${a.response.status} ${a.response.text}`),
      ).toEqual([]);
      for (const a of after) if ((change.refusedAt as readonly string[]).includes(a.site)) expect(ids(a.response)).toEqual([change.id]);
      expect(attempts.filter((a) => a.response.status >= 500).map((a) => a.response.text)).toEqual([]);
      // The codes table holds exactly the codes that answered 200.
      const held = new Set(
        (await codeItemsOf(account.accountId)).filter((item) => item.code_generator_id === id && item.holder !== undefined).map((item) => item.code),
      );
      expect(held).toEqual(new Set(attempts.filter((a) => a.response.status === 200).map((a) => a.code)));
      expect(after.length).toBeGreaterThan(0);
      summary.push(`${change.name}: ${attempts.length} redemptions, ${after.length} after the 200, ${held.size} held`);
    }
    console.log(`terms-races: ${summary.join('; ')}`);
  });
});
