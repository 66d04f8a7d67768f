import { api } from '#http/chain';
import type { CodeItem } from '#data/codes';
import { readRedemptionState } from '#data/redemptions';
import { generatorSettings } from '#codes/generator-settings';
import { assess, distinctCodes, fails, freshGenerators, withInactive, type Till } from './assessment.ts';
import { codeValid, failure, success } from './messages.ts';
import type { CodesRedemptionInput } from '#http/schemas';
import codesRedemption from '#http/schemas/codesRedemption.generated';

/**
 * Checks codes for a POS transaction as a redemption would, and writes nothing: the same body,
 * the same checks and failure answers, and `code_valid` per code when a redemption would succeed
 * now. The codes and the transaction are read in one consistent BatchGetItem; each generator of
 * a code to be taken is read afresh (its status now, not a cached one).
 */
export const handler = api<CodesRedemptionInput>({
  host: 'pos',
  operationId: 'validateCodes',
  body: codesRedemption,
}).handler(async (event, context) => {
  const till: Till = { accountId: context.accountId, siteId: event.body.site_id, posTransactionId: event.body.pos_transaction_id };
  const listed = distinctCodes(event.body.codes);
  const spellings = listed.flatMap((code) => (code.spelling === undefined ? [] : [code.spelling]));
  const state = await readRedemptionState(till.accountId, till.siteId, till.posTransactionId, spellings);
  const read = assess(till, listed, state);
  const generators = freshGenerators(read);
  const settings = new Map((await Promise.all(generators.map((id) => generatorSettings(till.accountId, id, 0)))).map((s, i) => [generators[i]!, s]));
  const inactive = new Set(generators.filter((id) => settings.get(id)?.status !== 'active'));
  const assessment = withInactive(read, inactive);
  if (fails(assessment)) return failure(till, assessment);
  const descriptions = new Map<number, string>();
  for (const outcome of assessment.outcomes) {
    const id = (outcome as { item: CodeItem }).item.code_generator_id;
    if (!descriptions.has(id)) descriptions.set(id, settings.get(id)?.description ?? (await generatorSettings(till.accountId, id, 60_000))?.description ?? '');
  }
  return success(
    assessment.outcomes.map((outcome) => {
      const { item } = outcome as { item: CodeItem };
      return codeValid(item, descriptions.get(item.code_generator_id)!);
    }),
  );
});
