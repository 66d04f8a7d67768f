import { api } from '#http/chain';
import type { CodeItem } from '#data/codes';
import { readRedemptionState } from '#data/redemptions';
import { codeCount, itemUses } from '#data/code-counts';
import { readPools, snapshot, type Count } from '#data/counts';
import { customerUses } from '#data/customer-uses';
import { promotionCount } from '#data/promotion-shards';
import { customerHash } from '#runtime/customer-key';
import { generatorSettings, settingsOf, type GeneratorSettings } from '#codes/generator-settings';
import {
  assess,
  distinctCodes,
  fails,
  freshCodes,
  given,
  judge,
  judgedGenerators,
  knowNothing,
  type Assessment,
  type KnownCounts,
  type Till,
} from './assessment.ts';
import { codeValid, failure, success } from './messages.ts';
import type { CodesRedemptionInput } from '#http/schemas';
import codesRedemption from '#http/schemas/codesRedemption.generated';
import { basketRules } from '#codes/terms';

/** The description shown for a code the transaction holds already may lag a change by this much. */
const DESCRIPTION_AGE_MS = 60_000;

/**
 * Checks codes for a POS transaction as a redemption would, and writes nothing: the same body,
 * the same checks, failure answers and amounts, and `code_valid` per code when a redemption would
 * succeed now. Two DynamoDB requests: the codes and the transaction in one consistent
 * BatchGetItem, then the generators of the codes to take in another (their terms now, never a
 * cached copy: a check after a PATCH's 200 answers by the new terms). Codes with limits cost a
 * third (their pools and the customer's counts, one BatchGetItem), and a count whose pool looks
 * short a snapshot (data/counts.ts): a refusal is judged exactly, as a redemption's is.
 */
export const handler = api<CodesRedemptionInput>({
  host: 'pos',
  operationId: 'validateCodes',
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
  const state = await readRedemptionState(till.accountId, till.siteId, till.posTransactionId, spellings);
  const read = assess(till, listed, state);
  const settings = await settingsOf(till.accountId, judgedGenerators(read), true);
  const now = Date.now();
  const known = await knownCounts(till, judge(till, read, settings, now), settings);
  const assessment = judge(till, read, settings, now, known);
  if (fails(assessment)) return failure(till, assessment);
  for (const outcome of assessment.outcomes) {
    const id = (outcome as { item: CodeItem }).item.code_generator_id;
    if (!settings.has(id)) settings.set(id, await generatorSettings(till.accountId, id, DESCRIPTION_AGE_MS));
  }
  return success(
    assessment.outcomes.map((outcome) => {
      const { item } = outcome as { item: CodeItem };
      return codeValid(item, settings.get(item.code_generator_id)?.description ?? '', given(outcome));
    }),
  );
});

/**
 * What the counts of the codes a redemption would take hold now, exactly where it matters: a
 * pool counts what its shards hold and reserve, so one with room enough says yes; one short is
 * looked at whole (a snapshot). A customer's count is read as it is.
 */
async function knownCounts(till: Till, judged: Assessment, settings: ReadonlyMap<number, GeneratorSettings | undefined>): Promise<KnownCounts> {
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
