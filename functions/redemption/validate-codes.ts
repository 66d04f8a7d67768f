import { api } from '#http/chain';
import type { CodeItem } from '#data/codes';
import { transactionKey } from '#data/pos-transactions';
import { shardVersions } from '#data/promotion-shards';
import { readRedemptionState } from '#data/redemptions';
import { generatorSettings, settingsAtLeast, type GeneratorSettings } from '#codes/generator-settings';
import { assess, distinctCodes, fails, given, judge, judgedGenerators, type Till } from './assessment.ts';
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
 * BatchGetItem, then the shards this transaction's redemption would go through (one per
 * promotion), whose versions say whether the cached terms are current; a generator whose cached
 * terms are older than its shard is read afresh. A refusal is judged by terms read afresh.
 */
export const handler = api<CodesRedemptionInput>({
  host: 'pos',
  operationId: 'validateCodes',
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
  const state = await readRedemptionState(till.accountId, till.siteId, till.posTransactionId, spellings);
  const read = assess(till, listed, state);
  const generators = judgedGenerators(read);
  const versions = await shardVersions(till.accountId, transactionKey(till.accountId, till.siteId, till.posTransactionId), generators);
  const settings = new Map<number, GeneratorSettings | undefined>();
  for (const id of generators) settings.set(id, await settingsAtLeast(till.accountId, id, versions.get(id)!));
  const now = Date.now();
  let assessment = judge(till, read, settings, now);
  if (fails(assessment) && generators.length > 0) {
    for (const id of generators) settings.set(id, await generatorSettings(till.accountId, id, 0));
    assessment = judge(till, read, settings, now);
  }
  if (fails(assessment)) return failure(till, assessment);
  for (const outcome of assessment.outcomes) {
    const id = (outcome as { item: CodeItem }).item.code_generator_id;
    if (!settings.has(id)) settings.set(id, await generatorSettings(till.accountId, id, DESCRIPTION_AGE_MS));
  }
  return success(
    assessment.outcomes.map((outcome) => {
      const { item } = outcome as { item: CodeItem };
      const description = settings.get(item.code_generator_id)?.description ?? '';
      return codeValid(item, description, given(outcome));
    }),
  );
});
