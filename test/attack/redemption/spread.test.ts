import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCountingProxy, type CountingProxy } from '../../../scripts/bench/proxy.ts';
import { mostTouched, touchedItems } from '../../../scripts/bench/touched-items.ts';
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
let call: typeof import('../../support/http.ts').call;

beforeAll(async () => {
  proxy = await startCountingProxy(process.env.DYNAMODB_ENDPOINT!);
  process.env.DYNAMODB_ENDPOINT = proxy.endpoint;
  ({ call } = await import('../../support/http.ts'));
  const { startTestApi } = await import('../../support/local-api.ts');
  const { newAccount } = await import('../../support/accounts.ts');
  api = await startTestApi();
  token = (await newAccount()).token;
});
afterAll(async () => {
  await api?.close();
  await proxy?.close();
});

describe('the redemptions of one promotion spread over its items', () => {
  it('240 redemptions of distinct codes of one promotion: no item takes part in more than a small share of them', async () => {
    const created = await call(api, 'core', 'POST', '/v1.0/codegen', {
      token,
      body: { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'SPREAD-', store_id: 1, discount: { type: 'percent', percent_off: 5 } } },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json.code_generator.id as number;
    // A changed promotion: its shards exist, and the redemptions prove the current version on them.
    const patched = await call(api, 'core', 'PATCH', `/v1.0/codegen/${id}`, { token, body: { code_generator: { description: 'Spread' } } });
    expect(patched.status, patched.text).toBe(200);
    const issued = await call(api, 'core', 'POST', `/v1.0/codegen/${id}/codes`, { token, body: { count: 240 } });
    expect(issued.status, issued.text).toBe(201);
    const codes = issued.json.codes as string[];
    proxy.take();

    const transactions: string[][] = [];
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
      transactions.push(...calls.filter((c) => c.target === 'TransactWriteItems').map(touchedItems));
      // At most 2 DynamoDB requests a redemption (the token lookup aside).
      const aside = [process.env.API_KEYS_TABLE, process.env.COUNTERS_TABLE];
      const own = calls.filter((c) => !aside.includes(c.request.TableName as string));
      expect(own.length, own.map((c) => c.target).join(', ')).toBeLessThanOrEqual(2 * batch.length);
    }
    expect(transactions).toHaveLength(codes.length);
    const top = mostTouched(transactions);
    const share = top.count / transactions.length;
    console.log(
      `spread: ${transactions.length} redemptions of one promotion; the most-touched item (${top.item}) takes part in ${top.count} (${(share * 100).toFixed(1)} %)`,
    );
    // 240 balls into 64 bins: the fullest holds about 9; 10 % leaves room for chance, and is far from every one.
    expect(share).toBeLessThan(0.1);
  });
});
