import type { CodeItem } from '#data/codes';
import { codeCount, itemUses } from '#data/code-counts';
import { readPools, snapshot, type Count } from '#data/counts';
import { customerUses } from '#data/customer-uses';
import { promotionCount } from '#data/promotion-shards';
import { freshCodes, knowNothing, type Assessment, type KnownCounts, type Till } from './assessment.ts';

/**
 * What the counts of the codes a request would take hold now, exactly where it matters: a
 * pool counts what its shards hold and reserve, so one with room enough says yes; one short is
 * looked at whole (a snapshot). A customer's count is read as it is. `judged` is the request
 * judged by its terms alone (nothing known of its counts): its codes to take are those whose
 * counts are read, and the uses of its multi-use codes its terms refuse (they count towards
 * MAX_HELD_CODES while they have one left). A check judges by these; a redemption refused for
 * any reason judges by them too, so that its answer names every code its counts refuse.
 */
export async function knownCounts(till: Till, judged: Assessment): Promise<KnownCounts> {
  const known = knowNothing();
  const taking = freshCodes(judged);
  const budgets = new Map<number, { count: Count; limit: number; take: number }>();
  const codes = new Map<string, { count: Count; limit: number; item: CodeItem }>();
  const customers = new Set<number>();
  for (const { item, terms, shared } of taking) {
    if (terms!.max_redemptions !== null) {
      const entry =
        budgets.get(terms!.id) ??
        budgets.set(terms!.id, { count: promotionCount(till.accountId, terms!.id), limit: terms!.max_redemptions, take: 0 }).get(terms!.id)!;
      entry.take++;
    }
    if (shared && item.pooled) codes.set(item.code_key, { count: codeCount(item), limit: terms!.max_redemptions_per_code, item });
    if (till.customer !== undefined && terms!.max_redemptions_per_customer !== null) customers.add(terms!.id);
  }
  // A code its terms refuse still counts towards MAX_HELD_CODES while it has a use left (assessment.ts).
  for (const outcome of judged.outcomes) {
    if (outcome.kind !== 'failed' || !('item' in outcome.failure) || !outcome.failure.item.pooled) continue;
    const { item, terms } = outcome.failure;
    codes.set(item.code_key, { count: codeCount(item), limit: terms.max_redemptions_per_code, item });
  }
  const counts = [...budgets.values(), ...codes.values()];
  if (counts.length === 0 && customers.size === 0) return known;
  const [pools, uses] = await Promise.all([
    readPools(counts.map(({ count }) => count)),
    till.customer === undefined ? new Map<number, number>() : customerUses(till.accountId, till.customer, [...customers]),
  ]);
  for (const [id, used] of uses) known.customers.set(id, used);
  await Promise.all([
    ...[...budgets].map(async ([id, { count, limit, take }]) => {
      if (limit - (pools.get(count.prefix)?.taken ?? 0) >= take) return;
      known.budgets.set(id, (await snapshot(count)).used);
    }),
    ...[...codes].map(async ([key, { count, limit }]) => {
      if (limit - (pools.get(count.prefix)?.taken ?? 0) >= 1) return;
      known.codes.set(key, (await snapshot(count, itemUses)).used);
    }),
  ]);
  return known;
}
