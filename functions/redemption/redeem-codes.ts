import { api } from '#http/chain';
import { serviceUnavailable } from '#http/errors';
import { generatorIsActive, type CodeGenerator } from '#data/code-generators';
import { redeemCode, type CodeItem } from '#data/codes';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { holdCodes, transactionKey, transactionResourceId, type PosTransaction } from '#data/pos-transactions';
import { readRedemptionState } from '#data/redemptions';
import { writeTogether } from '#data/transactions';
import { generatorSettings, rememberGenerator } from '#codes/generator-settings';
import { assess, distinctCodes, fails, freshGenerators, withInactive, type Assessment, type Till } from './assessment.ts';
import { codeRedeemed, failure, success } from './messages.ts';
import type { CodesRedemptionInput } from '#http/schemas';
import codesRedemption from '#http/schemas/codesRedemption.generated';

/** Rounds lost to a concurrent write on the same transaction (another request of it) before a 503. */
const ATTEMPTS = 4;
/**
 * Every redemption of a generator's codes condition-checks the generator (deactivation is
 * immediate), and DynamoDB cancels a transaction that meets another on the same item: many
 * tills redeeming one promotion's codes at once take turns on it. More tries than the default,
 * with jittered pauses, inside the invocation's deadline.
 */
const CONFLICT_ATTEMPTS = 12;
/** The description a till shows may lag a change by this much (PRODUCT.md: up to a minute). */
const DESCRIPTION_AGE_MS = 60_000;

/**
 * Redeems codes for a POS transaction, all or nothing, in two DynamoDB requests: one consistent
 * BatchGetItem (the codes and the transaction), then one TransactWriteItems whose conditions
 * enforce what the read suggested: each generator still active (deactivation is immediate), each
 * code held by no one (exactly one of many racing tills wins), the transaction as read and not
 * voided (a void that arrives first wins; never more than 50 codes), with the codes.redeemed
 * event. A request whose codes the transaction holds already (a retry, or a till adding a code
 * to its sale) answers 200 again and writes nothing for them.
 */
export const handler = api<CodesRedemptionInput>({
  host: 'pos',
  operationId: 'redeemCodes',
  body: codesRedemption,
}).handler(async (event, context) => {
  const till: Till = { accountId: context.accountId, siteId: event.body.site_id, posTransactionId: event.body.pos_transaction_id };
  const listed = distinctCodes(event.body.codes);
  const spellings = listed.flatMap((code) => (code.spelling === undefined ? [] : [code.spelling]));

  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const state = await readRedemptionState(till.accountId, till.siteId, till.posTransactionId, spellings);
    const assessment = assess(till, listed, state);
    if (fails(assessment)) return failure(till, await withCurrentInactive(till.accountId, assessment));
    const fresh = assessment.outcomes.flatMap((outcome) => (outcome.kind === 'fresh' ? [outcome.item] : []));
    if (fresh.length === 0) return answer(till, assessment, '');

    const now = new Date();
    const redeemedAt = now.toISOString();
    const generators = freshGenerators(assessment);
    const eventRecord = newEvent(await nextId(), till.accountId, 'codes.redeemed', transactionResourceId(till.siteId, till.posTransactionId), now);
    const holder = {
      key: transactionKey(till.accountId, till.siteId, till.posTransactionId),
      siteId: till.siteId,
      posTransactionId: till.posTransactionId,
      redeemedAt,
    };
    const items = [
      ...generators.map((id) => generatorIsActive(till.accountId, id)),
      ...fresh.map((item) => redeemCode(item, holder)),
      holdCodes(
        till.accountId,
        till.siteId,
        till.posTransactionId,
        assessment.transaction,
        fresh.map((item) => ({ code: item.code, code_generator_id: item.code_generator_id, redeemed_at: redeemedAt })),
      ),
      putEvent(eventRecord),
    ];
    const result = await writeTogether(items, { conflictAttempts: CONFLICT_ATTEMPTS });
    if (result.outcome === 'written') return answer(till, assessment, redeemedAt);

    // Which conditions failed, from what each returned: definite refusals, or a state that moved.
    const inactive = new Set<number>();
    const taken = new Map<string, CodeItem>();
    let voided = false;
    for (const [index, returned] of result.failed) {
      if (index < generators.length) {
        inactive.add(generators[index]!);
        if (returned) rememberGenerator(returned as CodeGenerator);
      } else if (index < generators.length + fresh.length) {
        const current = returned as CodeItem | undefined;
        if (current?.holder !== undefined && current.holder !== holder.key) taken.set(current.code, current);
      } else if (index === generators.length + fresh.length) {
        voided ||= (returned as PosTransaction | undefined)?.voided_at !== undefined;
      } else {
        freshIdCollided('events', eventRecord.id);
      }
    }
    if (inactive.size > 0 || taken.size > 0 || voided) {
      const refused: Assessment = {
        ...withInactive(assessment, inactive),
        voided,
      };
      return failure(till, {
        ...refused,
        outcomes: refused.outcomes.map((outcome) => {
          const current = outcome.kind === 'fresh' ? taken.get(outcome.item.code) : undefined;
          return current ? { kind: 'failed', failure: { reason: 'code_already_redeemed', item: current } } : outcome;
        }),
      });
    }
    // Another request of this transaction wrote first (or an event id collided): read again.
  }
  throw serviceUnavailable();
});

/**
 * A failing answer names every code that fails, so the inactive generators of the others are read
 * afresh (a cached status could be up to a minute old and miss a deactivation, as a check would
 * not). Only a request that fails anyway pays these reads, and it made no transaction; one that
 * would succeed is judged by its transaction's condition on each generator.
 */
async function withCurrentInactive(accountId: number, assessment: Assessment): Promise<Assessment> {
  const settings = await Promise.all(freshGenerators(assessment).map((id) => generatorSettings(accountId, id, 0)));
  return withInactive(assessment, new Set(settings.filter((s) => s?.status === 'inactive').map((s) => s!.id)));
}

/** 200: every listed code held by this transaction; those taken now carry this request's time. */
async function answer(till: Till, assessment: Assessment, redeemedAt: string) {
  const generators = [...new Set(assessment.outcomes.map((outcome) => (outcome as { item: CodeItem }).item.code_generator_id))];
  const settings = new Map(
    (await Promise.all(generators.map((id) => generatorSettings(till.accountId, id, DESCRIPTION_AGE_MS)))).map((s, i) => [generators[i]!, s]),
  );
  return success(
    assessment.outcomes.map((outcome) => {
      const { item } = outcome as { item: CodeItem };
      const at = outcome.kind === 'held' ? item.redeemed_at! : redeemedAt;
      return codeRedeemed(item, settings.get(item.code_generator_id)?.description ?? '', at);
    }),
  );
}
