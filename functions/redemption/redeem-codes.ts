import { api } from '#http/chain';
import { serviceUnavailable } from '#http/errors';
import { redeemCode, type CodeItem } from '#data/codes';
import { codeCount, itemUses, poolCode, putCodeRedemption } from '#data/code-counts';
import {
  grantCovers,
  grantFor,
  poolGrants,
  poolSeen,
  recallPool,
  reclaimGrants,
  rememberPool,
  shardFor,
  shardSeen,
  shardTakes,
  snapshot,
  type Count,
  type PoolSeen,
  type ShardSeen,
  type ShardWrite,
} from '#data/counts';
import { customerTakes } from '#data/customer-uses';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { holdCodes, transactionKey, transactionResourceId } from '#data/pos-transactions';
import { promotionCount, shardOf } from '#data/promotion-shards';
import { generatorAt } from '#data/code-generators';
import { readRedemptionState } from '#data/redemptions';
import { pause, writeTogether, type TransactItem } from '#data/transactions';
import { customerHash } from '#runtime/customer-key';
import { logger } from '#runtime/observability';
import { generatorSettings, settingsOf, type GeneratorSettings } from '#codes/generator-settings';
import { assess, distinctCodes, fails, given, freshCodes, judge, judgedGenerators, knowNothing, type Assessment, type Till } from './assessment.ts';
import { knownCounts } from './known-counts.ts';
import { codeRedeemed, success } from './messages.ts';
import { refusal } from './guessing.ts';
import type { CodesRedemptionInput } from '#http/schemas';
import codesRedemption from '#http/schemas/codesRedemption.generated';
import { basketRules } from '#codes/terms';

/**
 * Rounds lost to a concurrent write (another request of the transaction, a change of terms), to
 * the creation of a shard, a grant from a pool or a count's snapshot before a 503.
 */
const ATTEMPTS = 12;
/** Tries of one transaction that met another on an item (a shard, a pool) before it counts as a lost round. */
const CONFLICT_ATTEMPTS = 10;
/** The description shown for a code the transaction held already may lag a change by this much (PRODUCT.md: up to a minute). */
const DESCRIPTION_AGE_MS = 60_000;

/** What the request learnt of one count's shard and pool from its failed conditions. */
interface CountState {
  shard?: ShardSeen;
  pool?: PoolSeen;
}

/** What each item of the transaction is, to read its failed condition. */
type Part =
  | { readonly role: 'promotion-shard' | 'promotion-pool' | 'generator' | 'customer'; readonly terms: GeneratorSettings }
  | { readonly role: 'code-item' | 'code-pooling' | 'code-shard' | 'code-pool' | 'holder'; readonly item: CodeItem; readonly terms: GeneratorSettings }
  | { readonly role: 'transaction' | 'event' };

/**
 * Redeems codes for a POS transaction, all or nothing, in two DynamoDB requests while its counts
 * are far from their limits: one consistent BatchGetItem (the codes and the transaction), then
 * one TransactWriteItems. The codes are judged by their promotions' terms as this environment
 * knows them (cached at any age, read on a miss); the transaction writes, per promotion, the one
 * shard this POS transaction goes through, on the condition that no newer version of the terms
 * reached it (data/promotion-shards.ts): a change answered before this commit makes it fail, and
 * the codes are judged again by the new terms. The same shard counts the promotion's uses and,
 * with a budget, gives them from its grant (data/counts.ts); a multi-use code counts on its own
 * shards the same way and names the transaction in a holder record (data/code-counts.ts); a
 * customer's uses are one small item (data/customer-uses.ts). Beside them: each single-use code
 * held by no one (exactly one of many racing tills wins), the transaction as read and not voided
 * (a void that arrives first wins; never more than MAX_HELD_CODES codes), the amounts recorded
 * with the codes, and the codes.redeemed event. A grant spent, a pool short or a count's
 * snapshot costs a request more; a refusal of a count is judged by a snapshot or a failed
 * condition, never a guess. A request whose codes the transaction holds already (a retry, or a
 * till adding a code to its sale) answers 200 again with what they got then, and writes nothing
 * for them.
 */
export const handler = api<CodesRedemptionInput>({
  host: 'pos',
  operationId: 'redeemCodes',
  body: codesRedemption,
  bodyRules: basketRules,
}).handler(async (event, context) => {
  const customerId = event.body.customer_id ?? undefined;
  const till: Till = {
    accountId: context.accountId,
    siteId: event.body.site_id,
    posTransactionId: event.body.pos_transaction_id,
    ...(event.body.basket ? { basket: event.body.basket } : {}),
    ...(customerId !== undefined ? { customer: await customerHash(context.accountId, customerId) } : {}),
  };
  const listed = distinctCodes(event.body.codes);
  const spellings = listed.flatMap((code) => (code.spelling === undefined ? [] : [code.spelling]));
  const key = transactionKey(till.accountId, till.siteId, till.posTransactionId);
  let known = knowNothing();
  const counts = new Map<string, CountState>();
  const stateOf = (count: Count) => counts.get(count.prefix) ?? counts.set(count.prefix, {}).get(count.prefix)!;
  /** The codes.redeemed event's id: one for the request, whatever the tries (unless it collided), so ids stay dense. */
  let eventId: number | undefined;
  let read: Assessment | undefined;
  let settings: ReadonlyMap<number, GeneratorSettings | undefined> = new Map();
  let fresh = false;
  let stale = false;
  let now = new Date();
  /** What lost each round, for the log line of a request that runs out of rounds. */
  const lost: string[] = [];

  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (!read) {
      const state = await readRedemptionState(till.accountId, till.siteId, till.posTransactionId, spellings);
      read = assess(till, listed, state);
      now = new Date();
      settings = await settingsOf(till.accountId, judgedGenerators(read), fresh);
    } else if (stale) {
      fresh = true;
      settings = await settingsOf(till.accountId, judgedGenerators(read), true);
    }
    stale = false;
    let assessment = judge(till, read, settings, now.getTime(), known);
    if (fails(assessment)) {
      // A refusal names every failing code by the terms as they are now, never by a cached copy.
      if (!fresh && judgedGenerators(read).length > 0) {
        fresh = true;
        settings = await settingsOf(till.accountId, judgedGenerators(read), true);
        assessment = judge(till, read, settings, now.getTime(), known);
      }
      if (fails(assessment)) {
        // ... and by its counts as they are now, read as a check reads them: what failed conditions
        // showed covers only the counts they met, and a request refused before its write (a voided
        // or full transaction, a broken term) met none.
        const exact = await knownCounts(till, judge(till, read, settings, now.getTime()));
        assessment = judge(till, read, settings, now.getTime(), exact);
        if (fails(assessment)) return await refusal(context.keyId, till, assessment);
        known = exact; // the uses that refused it were given back meanwhile: write by what was just read
      }
    }
    const taking = freshCodes(assessment);
    if (taking.length === 0) return await answer(till, assessment, '', settings);

    const redeemedAt = now.toISOString();
    const holder = { key, siteId: till.siteId, posTransactionId: till.posTransactionId, redeemedAt };
    const promotions = new Map<number, { terms: GeneratorSettings; take: number }>();
    for (const { terms } of taking) {
      const entry = promotions.get(terms!.id);
      if (entry) entry.take++;
      else promotions.set(terms!.id, { terms: terms!, take: 1 });
    }

    // The counts whose pools are known to be short are looked at whole first, all at once (a
    // round each would spend the request's attempts): refused, or their grants reclaimed.
    const short = [
      ...[...promotions.values()]
        .filter(({ terms, take }) => isShort(counts.get(promotionCount(till.accountId, terms.id).prefix), take, terms.max_redemptions, terms.terms_version))
        .map(({ terms, take }) => ({
          count: promotionCount(till.accountId, terms.id),
          terms,
          take,
          limit: terms.max_redemptions!,
          shard: shardOf(key, terms.id),
          code: undefined,
        })),
      ...taking
        .filter(
          ({ item, terms, shared }) => shared && item.pooled && isShort(counts.get(item.code_key), 1, terms!.max_redemptions_per_code, terms!.terms_version),
        )
        .map(({ item, terms }) => ({
          count: codeCount(item),
          terms: terms!,
          take: 1,
          limit: terms!.max_redemptions_per_code,
          shard: shardFor(key, item.code_key),
          code: item,
        })),
    ];
    if (short.length > 0) {
      await Promise.all(
        short.map(async ({ count, terms, take, limit, shard, code }) => {
          const seen = await snapshot(count, code ? itemUses : undefined);
          if (seen.pool.version > terms.terms_version) {
            stale = true;
            return;
          }
          if (code) known.codes.set(code.code_key, seen.used);
          else known.budgets.set(terms.id, seen.used);
          const mine = seen.shards.get(shard) ?? { exists: false, used: 0 };
          rememberPool(count, seen.pool);
          if (seen.used + take > limit || seen.reserved === 0) counts.set(count.prefix, { shard: mine, pool: seen.pool });
          else if (await reclaimGrants(count, seen)) {
            counts.set(count.prefix, {
              shard: mine.left === undefined ? mine : { ...mine, left: 0 },
              pool: { ...seen.pool, taken: seen.pool.taken - seen.reserved },
            });
          } else counts.delete(count.prefix);
        }),
      );
      lost.push('short counts looked at');
      continue;
    }

    eventId ??= await nextId();
    const eventRecord = newEvent(eventId, till.accountId, 'codes.redeemed', transactionResourceId(till.siteId, till.posTransactionId), now);
    const items: TransactItem[] = [];
    const parts: Part[] = [];
    const add = (item: TransactItem, part: Part) => {
      items.push(item);
      parts.push(part);
    };
    for (const { terms, take } of promotions.values()) {
      const count = promotionCount(till.accountId, terms.id);
      const state = stateOf(count);
      const shard = shardOf(key, terms.id);
      const plan = planShard(count, state, take, terms.max_redemptions, terms.terms_version);
      add(shardTakes(count, shard, take, terms.terms_version, plan.write, true), { role: 'promotion-shard', terms });
      if (plan.pool) add(plan.pool, { role: 'promotion-pool', terms });
      if (plan.write.kind === 'create') add(generatorAt(till.accountId, terms.id, terms.terms_version), { role: 'generator', terms });
      if (till.customer !== undefined) {
        add(customerTakes(till.accountId, terms.id, till.customer, take, terms.max_redemptions_per_customer), { role: 'customer', terms });
      }
    }
    for (const { item, terms, amount, shared } of taking) {
      if (!shared) {
        add(redeemCode(item, holder, amount), { role: 'code-item', item, terms: terms! });
        continue;
      }
      const count = codeCount(item);
      const shard = shardFor(key, item.code_key);
      const limit = terms!.max_redemptions_per_code;
      if (!item.pooled) {
        // The code's first use through its counts: its pool is created with what its item holds.
        const held = itemUses(item);
        const grant = grantFor(limit - held - 1);
        add(poolCode(item), { role: 'code-pooling', item, terms: terms! });
        add(shardTakes(count, shard, 1, terms!.terms_version, { kind: 'create', grant }, false), { role: 'code-shard', item, terms: terms! });
        add(poolGrants(count, 1 + grant, limit, terms!.terms_version, { held }), { role: 'code-pool', item, terms: terms! });
      } else {
        const plan = planShard(count, stateOf(count), 1, limit, terms!.terms_version);
        add(shardTakes(count, shard, 1, terms!.terms_version, plan.write, false), { role: 'code-shard', item, terms: terms! });
        if (plan.pool) add(plan.pool, { role: 'code-pool', item, terms: terms! });
      }
      add(putCodeRedemption(item, shard, holder, amount), { role: 'holder', item, terms: terms! });
    }
    add(
      holdCodes(
        till.accountId,
        till.siteId,
        till.posTransactionId,
        assessment.transaction,
        taking.map(({ item, terms, amount, shared }) => ({
          code: item.code,
          code_generator_id: item.code_generator_id,
          redeemed_at: redeemedAt,
          discount: terms!.discount,
          ...(amount ?? {}),
          counted: shared ? 'shards' : 'item',
          ...(till.customer !== undefined ? { customer: till.customer } : {}),
        })),
      ),
      { role: 'transaction' },
    );
    add(putEvent(eventRecord), { role: 'event' });

    // Tills meet on a count's shards and, near a limit, its pool: a conflict waits and tries again, longer than elsewhere.
    const result = await writeTogether(items, { conflictAttempts: CONFLICT_ATTEMPTS });
    if (result.outcome === 'written') return await answer(till, assessment, redeemedAt, settings);

    lost.push(`conditions failed: ${[...new Set([...result.failed.keys()].map((index) => parts[index]!.role))].join(', ')}`);
    // Which conditions failed, and what they showed: a shard with newer terms (judge again by
    // terms read afresh), a shard not created yet or a grant spent (write it so), a pool short
    // (look at the count whole) or not ready, a customer at the limit (refuse by what it holds),
    // a code taken, pooled or a transaction changed meanwhile (read again), a colliding event id.
    for (const [index, old] of result.failed) {
      const part = parts[index]!;
      switch (part.role) {
        case 'promotion-shard':
        case 'code-shard': {
          const count = 'item' in part ? codeCount(part.item) : promotionCount(till.accountId, part.terms.id);
          if (old?.terms_version !== undefined && Number(old.terms_version) > part.terms.terms_version) stale = true;
          else stateOf(count).shard = shardSeen(old);
          break;
        }
        case 'promotion-pool':
        case 'code-pool': {
          if ('item' in part && !part.item.pooled) {
            read = undefined; // another till pooled the code first
            break;
          }
          const count = 'item' in part ? codeCount(part.item) : promotionCount(till.accountId, part.terms.id);
          const pool = poolSeen(old);
          rememberPool(count, pool);
          if (pool.version > part.terms.terms_version) stale = true;
          else if (!pool.ready) await pause(attempt);
          else stateOf(count).pool = pool;
          break;
        }
        case 'generator':
          stale = true;
          break;
        case 'customer':
          known.customers.set(part.terms.id, Number(old?.used ?? 0));
          break;
        case 'code-item':
        case 'code-pooling':
        case 'transaction':
          read = undefined;
          break;
        case 'event':
          freshIdCollided('events', eventRecord.id);
          eventId = undefined;
          break;
        case 'holder':
          break;
      }
    }
  }
  // Rare by design (each round learns what failed it): on-call needs what the rounds met.
  logger.warn('redemption ran out of rounds', { error_code: 'redemption_rounds_exhausted', rounds: ATTEMPTS, lost });
  throw serviceUnavailable();
});

/**
 * Whether what the request learnt of a count shows that neither the shard's grant nor its pool
 * can cover `take` more uses: the count is then looked at whole (refused, or its grants reclaimed).
 */
function isShort(state: CountState | undefined, take: number, limit: number | null, version: number): boolean {
  if (limit === null || !state?.pool || state.shard === undefined || grantCovers(state.shard, take, version)) return false;
  const returned = state.shard.exists ? (state.shard.left ?? 0) : 0;
  return limit - state.pool.taken - take + returned < 0;
}

/**
 * How a redemption writes a count's shard, from what it learnt: from the shard's grant while it
 * covers the take (or nothing is known: optimistic, the condition decides), else a new grant
 * from the pool sized by what the pool was last seen to hold; without a limit, only the count.
 */
function planShard(count: Count, state: CountState, take: number, limit: number | null, version: number): { write: ShardWrite; pool?: TransactItem } {
  if (limit === null) return { write: state.shard?.exists === false ? { kind: 'create' } : { kind: 'count' } };
  if (state.shard === undefined || (state.shard.exists && grantCovers(state.shard, take, version))) return { write: { kind: 'fast' } };
  const returned = state.shard.exists ? (state.shard.left ?? 0) : 0;
  const taken = state.pool?.taken ?? recallPool(count) ?? 0;
  const grant = grantFor(Math.max(0, limit - taken - take + returned));
  const write: ShardWrite = state.shard.exists ? { kind: 'refill', seen: state.shard, grant } : { kind: 'create', grant };
  return { write, pool: poolGrants(count, take + grant - returned, limit, version) };
}

/** 200: every listed code held by this transaction; those taken now carry this request's time and amounts. */
async function answer(till: Till, assessment: Assessment, redeemedAt: string, judged: ReadonlyMap<number, GeneratorSettings | undefined>) {
  const settings = new Map(judged);
  for (const outcome of assessment.outcomes) {
    const id = (outcome as { item: CodeItem }).item.code_generator_id;
    if (!settings.has(id)) settings.set(id, await generatorSettings(till.accountId, id, DESCRIPTION_AGE_MS));
  }
  return success(
    assessment.outcomes.map((outcome) => {
      const { item } = outcome as { item: CodeItem };
      const description = settings.get(item.code_generator_id)?.description ?? '';
      return codeRedeemed(item, description, outcome.kind === 'held' ? outcome.held.redeemed_at : redeemedAt, given(outcome));
    }),
  );
}
