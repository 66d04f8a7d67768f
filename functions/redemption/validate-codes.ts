import { api } from '#http/chain';
import type { CodeItem } from '#data/codes';
import { readRedemptionState } from '#data/redemptions';
import { customerHash } from '#runtime/customer-key';
import { generatorSettings, settingsOf } from '#codes/generator-settings';
import { assess, distinctCodes, fails, given, judge, judgedGenerators, type Till } from './assessment.ts';
import { codeValid, success } from './messages.ts';
import { refusal } from './guessing.ts';
import { knownCounts } from './known-counts.ts';
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
  const known = await knownCounts(till, judge(till, read, settings, now));
  const assessment = judge(till, read, settings, now, known);
  if (fails(assessment)) return await refusal(context.keyId, till, assessment);
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
