import { api } from '#http/chain';
import { serviceUnavailable } from '#http/errors';
import { redeemCode, type CodeItem } from '#data/codes';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { holdCodes, transactionKey, transactionResourceId } from '#data/pos-transactions';
import { createdAt, judgedAt, shardOf } from '#data/promotion-shards';
import { generatorAt } from '#data/code-generators';
import { readRedemptionState } from '#data/redemptions';
import { writeTogether } from '#data/transactions';
import { generatorSettings, settingsOf, type GeneratorSettings } from '#codes/generator-settings';
import { assess, distinctCodes, fails, given, freshCodes, judge, judgedGenerators, type Assessment, type Till } from './assessment.ts';
import { codeRedeemed, failure, success } from './messages.ts';
import type { CodesRedemptionInput } from '#http/schemas';
import codesRedemption from '#http/schemas/codesRedemption.generated';
import { basketRules } from '#codes/terms';

/**
 * Rounds lost to a concurrent write (another request of the transaction, a change of terms) or to
 * the creation of a promotion's shard before a 503.
 */
const ATTEMPTS = 5;
/** The description shown for a code the transaction held already may lag a change by this much (PRODUCT.md: up to a minute). */
const DESCRIPTION_AGE_MS = 60_000;

/**
 * Redeems codes for a POS transaction, all or nothing, in two DynamoDB requests: one consistent
 * BatchGetItem (the codes and the transaction), then one TransactWriteItems. The codes are judged
 * by their promotions' terms as this environment knows them (cached at any age, read on a miss);
 * the transaction writes, per promotion, the one shard this POS transaction goes through, on the
 * condition that no newer version of the terms reached it (data/promotion-shards.ts): a change
 * answered before this commit makes it fail, and the codes are judged again by the new terms.
 * Beside it: each code held by no one (exactly one of many racing tills wins), the transaction as
 * read and not voided (a void that arrives first wins; never more than 50 codes), the amounts
 * recorded with the codes, and the codes.redeemed event. A request whose codes the transaction
 * holds already (a retry, or a till adding a code to its sale) answers 200 again with what they
 * got then, and writes nothing for them.
 */
export const handler = api<CodesRedemptionInput>({
  host: 'pos',
  operationId: 'redeemCodes',
  body: codesRedemption,
  bodyRules: basketRules,
}).handler(async (event, context) => {
  const till: Till = {
    accountId: context.accountId,
    siteId: event.body.site_id,
    posTransactionId: event.body.pos_transaction_id,
    ...(event.body.basket ? { basket: event.body.basket } : {}),
  };
  const listed = distinctCodes(event.body.codes);
  const spellings = listed.flatMap((code) => (code.spelling === undefined ? [] : [code.spelling]));
  const key = transactionKey(till.accountId, till.siteId, till.posTransactionId);
  let fresh = false;
  /** Promotions whose shard for this transaction did not exist at the last try: this try creates it. */
  const creating = new Set<number>();

  /** The codes.redeemed event's id: one for the request, whatever the tries (unless it collided), so ids stay dense. */
  let eventId: number | undefined;
  /** What the last try judged, when all it lacked was a shard to create: the next try writes it again without a read. */
  let again: { assessment: Assessment; settings: ReadonlyMap<number, GeneratorSettings | undefined>; now: Date } | undefined;

  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let assessment: Assessment;
    let settings: ReadonlyMap<number, GeneratorSettings | undefined>;
    let now: Date;
    if (again) ({ assessment, settings, now } = again);
    else {
      const state = await readRedemptionState(till.accountId, till.siteId, till.posTransactionId, spellings);
      const read = assess(till, listed, state);
      now = new Date();
      settings = await settingsOf(till.accountId, judgedGenerators(read), fresh);
      assessment = judge(till, read, settings, now.getTime());
      if (fails(assessment)) {
        // A refusal names every failing code by the terms as they are now, never by a cached copy.
        if (!fresh && judgedGenerators(read).length > 0) {
          settings = await settingsOf(till.accountId, judgedGenerators(read), true);
          assessment = judge(till, read, settings, now.getTime());
        }
        if (fails(assessment)) return failure(till, assessment);
      }
    }
    again = undefined;
    const taking = freshCodes(assessment);
    if (taking.length === 0) return await answer(till, assessment, '', settings);

    const redeemedAt = now.toISOString();
    const promotions = [...new Map(taking.map(({ terms }) => [terms!.id, terms!])).values()];
    eventId ??= await nextId();
    const eventRecord = newEvent(eventId, till.accountId, 'codes.redeemed', transactionResourceId(till.siteId, till.posTransactionId), now);
    const holder = { key, siteId: till.siteId, posTransactionId: till.posTransactionId, redeemedAt };
    const shards = promotions.map((terms) =>
      creating.has(terms.id)
        ? [createdAt(till.accountId, terms.id, shardOf(key, terms.id), terms.terms_version), generatorAt(till.accountId, terms.id, terms.terms_version)]
        : [judgedAt(till.accountId, terms.id, shardOf(key, terms.id), terms.terms_version)],
    );
    const items = [
      ...shards.flat(),
      ...taking.map(({ item, amount }) => redeemCode(item, holder, amount)),
      holdCodes(
        till.accountId,
        till.siteId,
        till.posTransactionId,
        assessment.transaction,
        taking.map(({ item, terms, amount }) => ({
          code: item.code,
          code_generator_id: item.code_generator_id,
          redeemed_at: redeemedAt,
          discount: terms!.discount,
          ...(amount ?? {}),
        })),
      ),
      putEvent(eventRecord),
    ];
    const result = await writeTogether(items);
    if (result.outcome === 'written') return await answer(till, assessment, redeemedAt, settings);

    // Which conditions failed: a shard with newer terms (judge again, by terms read afresh), a
    // shard not created yet (create it) or created meanwhile, a generator changed since its terms
    // were read, a code taken by another transaction or a void that came first (judge again from
    // a new read), or an event id that collided.
    let index = 0;
    const missing = new Set<number>();
    for (const [n, terms] of promotions.entries()) {
      const failedShard = result.failed.has(index);
      if (creating.has(terms.id)) {
        if (failedShard) creating.delete(terms.id); // another redemption created it first
        if (result.failed.has(index + 1)) fresh = true;
      } else if (failedShard) {
        if (result.failed.get(index) === undefined) {
          creating.add(terms.id);
          missing.add(index);
        } else fresh = true;
      }
      index += shards[n]!.length;
    }
    const missingShardsOnly = [...result.failed.keys()].every((failed) => missing.has(failed));
    if (missingShardsOnly) again = { assessment, settings, now };
    if (result.failed.has(index + taking.length + 1)) {
      freshIdCollided('events', eventRecord.id);
      eventId = undefined;
    }
  }
  throw serviceUnavailable();
});

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
