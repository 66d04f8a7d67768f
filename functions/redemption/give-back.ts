import { codeKey, releaseCode } from '#data/codes';
import { codeCount, deleteCodeRedemption } from '#data/code-counts';
import { shardFor, shardGivesBack } from '#data/counts';
import { customerGivesBack } from '#data/customer-uses';
import type { HeldCode } from '#data/pos-transactions';
import { promotionCount, shardOf } from '#data/promotion-shards';
import type { TransactItem } from '#data/transactions';

/**
 * A void's release of what its transaction holds, for its DynamoDB transaction: each code as its
 * redemption counted it (the code's holder field, or a multi-use code's shard and holder record),
 * and per promotion the uses its shard counted and those of the customer the till named
 * (PRODUCT.md "Counting": every use given back, once, with the void). Every item is conditioned
 * on holding what it gives back: a failure is a bug, not a state.
 */
export function givesBack(accountId: number, transactionKey: string, held: readonly HeldCode[]): TransactItem[] {
  const items: TransactItem[] = [];
  const promotions = new Map<number, number>();
  const customers = new Map<string, { generatorId: number; customer: string; uses: number }>();
  for (const code of held) {
    if (code.counted === 'shards') {
      const key = codeKey(accountId, code.code);
      const shard = shardFor(transactionKey, key);
      const count = codeCount({ code_key: key, account_id: accountId, code_generator_id: code.code_generator_id, code: code.code });
      items.push(shardGivesBack(count, shard, 1), deleteCodeRedemption(key, shard, code.redeemed_at, transactionKey));
    } else items.push(releaseCode(accountId, code.code_generator_id, code.code, transactionKey));
    if (code.counted === undefined) continue; // redeemed before counts existed: nothing counted it
    promotions.set(code.code_generator_id, (promotions.get(code.code_generator_id) ?? 0) + 1);
    if (code.customer !== undefined) {
      const id = `${code.code_generator_id}#${code.customer}`;
      const entry = customers.get(id) ?? customers.set(id, { generatorId: code.code_generator_id, customer: code.customer, uses: 0 }).get(id)!;
      entry.uses++;
    }
  }
  for (const [generatorId, uses] of promotions) items.push(shardGivesBack(promotionCount(accountId, generatorId), shardOf(transactionKey, generatorId), uses));
  for (const { generatorId, customer, uses } of customers.values()) items.push(customerGivesBack(accountId, generatorId, customer, uses));
  return items;
}
