import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCountingProxy, type CountingProxy } from '../../../scripts/bench/proxy.ts';
import { mostTouched, touchedItems } from '../../../scripts/bench/touched-items.ts';
import { PROMOTION_SHARDS as SHARD_COUNT } from '../../../functions/tables.ts';
import type { LocalApi } from '../../../local/server.ts';

/**
 * No item that every redemption of one promotion touches (PRODUCT.md "Counting", Peak; issue
 * "One promotion at a chain's peak"). The functions of this file reach DynamoDB Local through a
 * counting proxy (scripts/bench/proxy.ts), which sees each TransactWriteItems as sent: the items
 * each redemption writes or condition-checks are counted, and the one that takes part in the most
 * of them must stay a small share. With 64 shards per promotion and N redemptions in distinct
 * POS transactions, the most-used shard takes part in about N/64 plus a few.
 *
 * The proxy must be in place before any module that holds the DynamoDB client loads: everything
 * of the service is imported dynamically, after the environment points at the proxy.
 */
let proxy: CountingProxy;
let api: LocalApi;
let token: string;
let accountId: number;
let call: typeof import('../../support/http.ts').call;

beforeAll(async () => {
  proxy = await startCountingProxy(process.env.DYNAMODB_ENDPOINT!);
  process.env.DYNAMODB_ENDPOINT = proxy.endpoint;
  ({ call } = await import('../../support/http.ts'));
  const { startTestApi } = await import('../../support/local-api.ts');
  const { newAccount } = await import('../../support/accounts.ts');
  api = await startTestApi();
  ({ token, accountId } = await newAccount());
});
afterAll(async () => {
  await api?.close();
  await proxy?.close();
});

describe('the redemptions of one promotion spread over its items', () => {
  it('240 redemptions of distinct codes of one promotion: no item takes part in more than a small share of them', { timeout: 120_000 }, async () => {
    const created = await call(api, 'core', 'POST', '/v1.0/codegen', {
      token,
      body: { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'SPREAD-', store_id: 1, discount: { type: 'percent', percent_off: 5 } } },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json.code_generator.id as number;
    // A changed promotion: the redemptions prove its current version on its shards.
    const patched = await call(api, 'core', 'PATCH', `/v1.0/codegen/${id}`, { token, body: { code_generator: { description: 'Spread' } } });
    expect(patched.status, patched.text).toBe(200);
    const issued = await call(api, 'core', 'POST', `/v1.0/codegen/${id}/codes`, { token, body: { count: 240 } });
    expect(issued.status, issued.text).toBe(201);
    const codes = issued.json.codes as string[];
    proxy.take();

    const transactions: string[][] = [];
    let requests = 0;
    for (let start = 0; start < codes.length; start += 8) {
      const batch = codes.slice(start, start + 8);
      const answers = await Promise.all(
        batch.map((code, i) =>
          call(api, 'pos', 'POST', '/v2.0/redeemed_codes', {
            token,
            body: { transaction: { site_id: `S-${i}`, pos_transaction_id: `P-${start + i}`, codes: [code], basket: { total: 1000, currency: 'EUR' } } },
          }),
        ),
      );
      for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      const calls = proxy.take();
      transactions.push(...calls.filter((c) => c.target === 'TransactWriteItems' && c.status === 200).map(touchedItems));
      const aside = [process.env.API_KEYS_TABLE, process.env.COUNTERS_TABLE];
      requests += calls.filter((c) => !aside.includes(c.request.TableName as string)).length;
    }
    // At most 2 DynamoDB requests a redemption (the token lookup and id blocks aside), but for the
    // first redemptions through each shard, which try once more to create it (twice when two of
    // them race to), and a cache miss.
    expect(requests).toBeLessThanOrEqual(2 * codes.length + 2 * SHARD_COUNT + 1);
    // Those retried transactions aside, each redemption's transaction took part once.
    transactions.splice(0, transactions.length, ...transactions.filter((items) => items.length > 1));
    expect(transactions.length).toBeGreaterThanOrEqual(codes.length);
    // The generator's own item takes part only where a redemption creates one of the promotion's
    // shards (at most once per shard in the promotion's life, data/promotion-shards.ts).
    const generatorItem = `codeGenerators ${accountId}|${id}`;
    const creating = transactions.filter((items) => items.some((item) => item.startsWith('promotionShards') && items.includes(generatorItem)));
    expect(transactions.filter((items) => items.includes(generatorItem))).toEqual(creating);
    expect(creating.length).toBeLessThanOrEqual(SHARD_COUNT);
    const top = mostTouched(transactions.map((items) => items.filter((item) => item !== generatorItem)));
    const share = top.count / transactions.length;
    console.log(
      `spread: ${transactions.length} redemptions of one promotion; ${creating.length} created a shard (and checked the generator); besides the generator, the most-touched item (${top.item}) takes part in ${top.count} (${(share * 100).toFixed(1)} %)`,
    );
    // 240 balls into 64 bins: the fullest holds about 9; 10 % leaves room for chance, and is far from every one.
    expect(share).toBeLessThan(0.1);
  });

  /**
   * A multi-use code and a budgeted promotion (PRODUCT.md "Counting", Peak): the counts' pools
   * take part only where a shard is created (its first grant) or a grant runs out (none here: a
   * grant is 1/256 of what is free), the generator only where a promotion shard is created.
   */
  for (const kind of ['one multi-use code with 1,000,000 uses', 'a promotion with a budget of 1,000,000'] as const) {
    it(`240 redemptions of ${kind}: no item takes part in more than a small share of them`, { timeout: 120_000 }, async () => {
      const multiUse = kind.startsWith('one multi-use');
      const created = await call(api, 'core', 'POST', '/v1.0/codegen', {
        token,
        body: {
          code_generator: {
            generation_type: 'tillgate',
            code_length: 8,
            prefix: multiUse ? 'FLYER-' : 'BUDGET-',
            store_id: 1,
            ...(multiUse ? { max_redemptions_per_code: 1_000_000 } : { max_redemptions: 1_000_000 }),
          },
        },
      });
      expect(created.status, created.text).toBe(201);
      const id = created.json.code_generator.id as number;
      const issued = await call(api, 'core', 'POST', `/v1.0/codegen/${id}/codes`, { token, body: { count: multiUse ? 1 : 240 } });
      expect(issued.status, issued.text).toBe(201);
      const codes = issued.json.codes as string[];
      proxy.take();
      const transactions: string[][] = [];
      let requests = 0;
      for (let start = 0; start < 240; start += 8) {
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            call(api, 'pos', 'POST', '/v2.0/redeemed_codes', {
              token,
              body: { transaction: { site_id: `S-${i}`, pos_transaction_id: `${kind}-${start + i}`, codes: [codes[multiUse ? 0 : start + i]!] } },
            }),
          ),
        );
        for (const answer of answers) expect(answer.status, answer.text).toBe(200);
        const calls = proxy.take();
        transactions.push(...calls.filter((c) => c.target === 'TransactWriteItems' && c.status === 200).map(touchedItems));
        const aside = [process.env.API_KEYS_TABLE, process.env.COUNTERS_TABLE];
        requests += calls.filter((c) => !aside.includes(c.request.TableName as string)).length;
      }
      // 2 a redemption, but for the first through each shard (a promotion's, a code's): one more.
      expect(requests).toBeLessThanOrEqual(2 * 240 + 2 * (multiUse ? 2 : 1) * SHARD_COUNT + 4);
      transactions.splice(0, transactions.length, ...transactions.filter((items) => items.length > 1));
      expect(transactions.length).toBeGreaterThanOrEqual(240);
      const generatorItem = `codeGenerators ${accountId}|${id}`;
      const isPool = (item: string) => item.endsWith('#pool');
      const withPool = transactions.filter((items) => items.some(isPool));
      // Pools: the code's creation, and each shard's first grant; the generator: each promotion shard's creation.
      expect(withPool.length).toBeLessThanOrEqual((multiUse ? 1 : 0) + SHARD_COUNT);
      expect(transactions.filter((items) => items.includes(generatorItem)).length).toBeLessThanOrEqual(SHARD_COUNT);
      const top = mostTouched(transactions.map((items) => items.filter((item) => item !== generatorItem && !isPool(item) && !item.startsWith('codes '))));
      const share = top.count / transactions.length;
      console.log(
        `spread: ${transactions.length} redemptions of ${kind}; ${withPool.length} took a grant from a pool; besides the pools and the generator, the most-touched item (${top.item}) takes part in ${top.count} (${(share * 100).toFixed(1)} %)`,
      );
      expect(share).toBeLessThan(0.1);
      if (multiUse) {
        // The code's own item: only when its counts began.
        const codeItem = transactions.filter((items) => items.some((item) => item.startsWith('codes ')));
        expect(codeItem.length).toBeLessThanOrEqual(1);
      }
    });
  }
});
