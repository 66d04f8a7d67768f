import { expect } from 'vitest';
import { codeGeneratorsOf, codeItemsOf, countItemsOf, posTransactionsOf } from '../../support/records.ts';

/**
 * The counts of PRODUCT.md "Counting" read whole from the tables (Scans of one account), for the
 * tests that check them after races (counting-races.test.ts) and along a fuzzed sequence
 * (fuzz.test.ts). Keys: `promotion <generator id>`, `code <account id>#<code>`,
 * `customer <generator id>#<customer hash>`.
 */

/** The uses the account's transactions not voided hold, per promotion, code and customer, as their records list them. */
function heldByTransactions(transactions: Awaited<ReturnType<typeof posTransactionsOf>>, accountId: number): Map<string, number> {
  const held = new Map<string, number>();
  const bump = (key: string) => held.set(key, (held.get(key) ?? 0) + 1);
  for (const transaction of transactions) {
    if (transaction.voided_at !== undefined) continue;
    for (const code of transaction.codes ?? []) {
      if (code.counted === undefined) continue;
      bump(`promotion ${code.code_generator_id}`);
      bump(`code ${accountId}#${code.code}`);
      if (code.customer !== undefined) bump(`customer ${code.code_generator_id}#${code.customer}`);
    }
  }
  return held;
}

const nonZero = (map: ReadonlyMap<string, number>) => new Map([...map].filter(([, n]) => n !== 0));

/**
 * The tables agree with the answers: per promotion, per multi-use code and per customer, the
 * counts equal the uses held by transactions not voided (and `expected`, when given: what a
 * model of the answers says they hold); each ready pool equals what its shards (and a code's
 * item) hold and reserve (a promotion's only while it has a budget: without one its pool is not
 * kept, and a PATCH that sets a budget again counts it afresh); a multi-use code's holder records
 * name exactly the transactions holding it through its shards.
 */
export async function expectCountsExact(accountId: number, expected?: ReadonlyMap<string, number>): Promise<void> {
  const [counts, transactions, codes, generators] = await Promise.all([
    countItemsOf(accountId),
    posTransactionsOf(accountId),
    codeItemsOf(accountId),
    codeGeneratorsOf(accountId),
  ]);
  const budgeted = new Set(generators.filter((generator) => (generator.max_redemptions ?? null) !== null).map((generator) => `promotion ${generator.id}`));
  const held = heldByTransactions(transactions, accountId);
  if (expected) expect(nonZero(held), 'the transactions hold what the answers gave them').toEqual(nonZero(expected));
  const counted = new Map<string, number>();
  const add = (key: string, n: number) => counted.set(key, (counted.get(key) ?? 0) + n);
  const reserved = new Map<string, number>();
  const reserve = (key: string, n: number) => reserved.set(key, (reserved.get(key) ?? 0) + n);
  const pools = new Map<string, Record<string, any>>();
  for (const shard of counts.promotionShards) {
    const key = `promotion ${shard.code_generator_id}`;
    if (shard.shard_number === undefined) pools.set(key, shard);
    else {
      add(key, shard.used ?? 0);
      reserve(key, shard.left ?? 0);
    }
  }
  for (const shard of counts.codeShards) {
    const key = `code ${shard.code_key}`;
    if (shard.shard_number === undefined) pools.set(key, shard);
    else {
      add(key, shard.used);
      reserve(key, shard.left ?? 0);
    }
  }
  for (const item of codes) {
    if (item.holder !== undefined) add(`code ${item.code_key}`, 1);
    if (item.pooled) reserve(`code ${item.code_key}`, item.left ?? 0);
  }
  for (const customer of counts.customerUses) add(`customer ${customer.code_generator_id}#${String(customer.customer_key).split('#')[2]}`, customer.used);
  expect(nonZero(counted), 'the counts equal the uses held').toEqual(nonZero(held));
  for (const [key, pool] of pools) {
    if (pool.ready !== true || (key.startsWith('promotion ') && !budgeted.has(key))) continue;
    expect(pool.taken, `${key}: the pool counts what its shards hold and reserve`).toBe((counted.get(key) ?? 0) + (reserved.get(key) ?? 0));
  }
  const holding = transactions.flatMap((transaction) =>
    transaction.voided_at !== undefined
      ? []
      : (transaction.codes ?? [])
          .filter((code) => code.counted === 'shards')
          .map((code) => JSON.stringify([code.code, transaction.site_id, transaction.pos_transaction_id, code.redeemed_at])),
  );
  const records = counts.codeRedemptions.map((record) => JSON.stringify([record.code, record.site_id, record.pos_transaction_id, record.redeemed_at]));
  expect(records.sort(), "a multi-use code's holder records name the transactions holding it").toEqual(holding.sort());
}
