import { codeSpelling, type CodeItem, type RecordedAmount } from '#data/codes';
import { itemUses } from '#data/code-counts';
import { MAX_HELD_CODES, transactionKey, type HeldCode, type PosTransaction } from '#data/pos-transactions';
import type { RedemptionState } from '#data/redemptions';
import type { Discount } from '#data/code-generators';
import type { GeneratorSettings } from '#codes/generator-settings';
import { amountOff, brokenTerm, type Basket, type TermFailure } from './terms.ts';

/**
 * The decisions of a redemption and of a check, from what one read found (data/redemptions.ts)
 * and the terms of the codes' promotions: which listed codes this transaction holds already,
 * which it would take now and what each takes off the basket, and which fail and why. Plain
 * functions of the state; the handlers write, the messages module words.
 */

/** A code as listed, once: the first spelling sent, and its key spelling when it can be a code. */
export interface ListedCode {
  readonly typed: string;
  readonly spelling?: string;
}

/** The listed codes in order of first appearance; a code listed twice, in any case, counts once. */
export function distinctCodes(codes: readonly string[]): ListedCode[] {
  const seen = new Set<string>();
  const listed: ListedCode[] = [];
  for (const typed of codes) {
    const spelling = codeSpelling(typed);
    const identity = spelling ?? `\u0000${typed}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    listed.push(spelling === undefined ? { typed } : { typed, spelling });
  }
  return listed;
}

/** The counts' refusals (PRODUCT.md "Counting"), judged after the terms, in this order. */
type CountFailure = 'customer_required' | 'code_already_redeemed' | 'code_usage_limit_reached' | 'promotion_budget_exhausted' | 'customer_limit_reached';

export type CodeFailure =
  | { readonly reason: 'code_not_found'; readonly typed: string }
  | { readonly reason: TermFailure | CountFailure; readonly item: CodeItem; readonly terms: GeneratorSettings };

/**
 * A listed code's outcome: held by this transaction already (with what it recorded), to be
 * redeemed now (by these terms, taking this amount off), taken by another transaction (a failure
 * once its terms are judged), or failed.
 */
type CodeOutcome =
  | { readonly kind: 'held'; readonly item: CodeItem; readonly held: HeldCode }
  | { readonly kind: 'fresh'; readonly item: CodeItem; readonly terms?: GeneratorSettings; readonly amount?: RecordedAmount; readonly shared?: boolean }
  | { readonly kind: 'taken'; readonly item: CodeItem }
  | { readonly kind: 'failed'; readonly failure: CodeFailure };

export interface Assessment {
  readonly outcomes: CodeOutcome[];
  readonly voided: boolean;
  /** The codes the transaction holds (none once voided). */
  readonly held: number;
  /** Set (by `judge`) when the transaction would hold more than MAX_HELD_CODES. */
  readonly tooMany?: { readonly held: number; readonly adding: number };
  readonly transaction?: PosTransaction;
}

export interface Till {
  readonly accountId: number;
  readonly siteId: string;
  readonly posTransactionId: string;
  readonly basket?: Basket;
  /** The keyed hash of the customer id the till sent (never the id). */
  readonly customer?: string;
}

/**
 * What a request knows exactly of the counts it takes from, learnt from a consistent snapshot or
 * a failed condition (never guessed): uses held of a promotion's budget and of a multi-use code
 * (by code key), and a customer's uses of a promotion. A count not known here is taken
 * optimistically: its conditions in the transaction decide.
 */
export interface KnownCounts {
  readonly budgets: Map<number, number>;
  readonly codes: Map<string, number>;
  readonly customers: Map<number, number>;
}

export const knowNothing = (): KnownCounts => ({ budgets: new Map(), codes: new Map(), customers: new Map() });

/** Whether a code counts its uses over shards: its generator allows more than one, or it did before. */
const isShared = (item: CodeItem, terms: GeneratorSettings) => item.pooled === true || terms.max_redemptions_per_code > 1;

/** What the read found, before any promotion's terms are judged (see `judge`). */
export function assess(till: Till, listed: readonly ListedCode[], state: RedemptionState): Assessment {
  const me = transactionKey(till.accountId, till.siteId, till.posTransactionId);
  const voided = state.transaction?.voided_at !== undefined;
  // A voided transaction holds nothing: its record keeps the codes its void released, which are judged afresh.
  const heldCodes = new Map((voided ? [] : (state.transaction?.codes ?? [])).map((held) => [held.code, held]));
  const outcomes = listed.map((code): CodeOutcome => {
    const item = code.spelling === undefined ? undefined : state.codes.get(code.spelling);
    if (!item) return { kind: 'failed', failure: { reason: 'code_not_found', typed: code.typed } };
    const mine = heldCodes.get(item.code);
    // A transaction holds a code at most once: through the code's holder field, or (a multi-use code) its own list.
    if (item.holder === me || mine)
      return {
        kind: 'held',
        item,
        held: mine ?? { code: item.code, code_generator_id: item.code_generator_id, redeemed_at: item.redeemed_at! },
      };
    if (item.holder !== undefined) return { kind: 'taken', item };
    return { kind: 'fresh', item };
  });
  return {
    outcomes,
    voided,
    held: heldCodes.size,
    ...(state.transaction ? { transaction: state.transaction } : {}),
  };
}

/** The generators whose terms a request must judge: those of the codes it does not hold yet. */
export const judgedGenerators = (assessment: Assessment) => [
  ...new Set(assessment.outcomes.flatMap((outcome) => (outcome.kind === 'fresh' || outcome.kind === 'taken' ? [outcome.item.code_generator_id] : []))),
];

/**
 * Judges each code not held yet by its promotion's terms, then its counts, in PRODUCT.md's order
 * (the terms; `customer_required`; the code's uses (`code_already_redeemed` while its maximum is
 * 1, else `code_usage_limit_reached`); the budget; the customer's limit), and computes what each
 * code takes off: the codes apply in their order, each to the total left after those before it,
 * a held code taking off what it recorded. The codes of one request count together: a code is
 * refused when those before it took what was left. A count is refused only by what `known`
 * holds exactly, or by a single-use code's holder. `settings` has every generator of
 * `judgedGenerators`; a missing one (deleted) does not exist for the till.
 *
 * MAX_HELD_CODES counts every code the request would add whatever its terms: each code the
 * transaction does not hold with a use left (a single-use code another transaction holds is
 * not one; a multi-use code is, whoever else holds it, until its uses are all held). A code's
 * uses count optimistically where `known` lacks them, so a request is refused as too many
 * only once they are known (the refusal path reads them: known-counts.ts).
 */
export function judge(
  till: Till,
  assessment: Assessment,
  settings: ReadonlyMap<number, GeneratorSettings | undefined>,
  now: number,
  known: KnownCounts = knowNothing(),
): Assessment {
  let left = till.basket?.total ?? 0;
  /** Uses this request's codes before the current one take, per promotion. */
  const taking = new Map<number, number>();
  let adding = 0;
  const outcomes = assessment.outcomes.map((outcome): CodeOutcome => {
    if (outcome.kind === 'held') {
      const { held } = outcome;
      if (held.discount_amount !== undefined && held.currency === till.basket?.currency) left = Math.max(0, left - held.discount_amount);
      return outcome;
    }
    if (outcome.kind === 'failed') return outcome;
    const { item } = outcome;
    const terms = settings.get(item.code_generator_id);
    if (!terms) return { kind: 'failed', failure: { reason: 'code_not_found', typed: item.code } };
    if (!isUsedUp(item, terms, known)) adding++;
    const refused = brokenTerm(terms, till.siteId, till.basket, now) ?? countRefusal(till, item, terms, known, taking.get(terms.id) ?? 0);
    if (refused) return { kind: 'failed', failure: { reason: refused, item, terms } };
    taking.set(terms.id, (taking.get(terms.id) ?? 0) + 1);
    const shared = isShared(item, terms);
    if (!till.basket || terms.discount.type === 'none') return { kind: 'fresh', item, terms, shared };
    const off = amountOff(terms.discount, left);
    left -= off;
    return { kind: 'fresh', item, terms, shared, amount: { discount_amount: off, currency: till.basket.currency } };
  });
  const { voided, held, transaction } = assessment;
  return { outcomes, voided, held, ...(held + adding > MAX_HELD_CODES ? { tooMany: { held, adding } } : {}), ...(transaction ? { transaction } : {}) };
}

/** Whether every use of a code is held (by other transactions): what it holds for sure, exactly for a code its item counts alone, at least its holder for a pooled one. */
const isUsedUp = (item: CodeItem, terms: GeneratorSettings, known: KnownCounts) =>
  (item.pooled ? Math.max(known.codes.get(item.code_key) ?? 0, itemUses(item)) : itemUses(item)) + 1 > terms.max_redemptions_per_code;

function countRefusal(till: Till, item: CodeItem, terms: GeneratorSettings, known: KnownCounts, before: number): CountFailure | undefined {
  if (terms.max_redemptions_per_customer !== null && till.customer === undefined) return 'customer_required';
  const maximum = terms.max_redemptions_per_code;
  if (isUsedUp(item, terms, known)) return maximum === 1 ? 'code_already_redeemed' : 'code_usage_limit_reached';
  const budget = known.budgets.get(terms.id);
  if (terms.max_redemptions !== null && budget !== undefined && budget + before + 1 > terms.max_redemptions) return 'promotion_budget_exhausted';
  const customer = known.customers.get(terms.id);
  if (terms.max_redemptions_per_customer !== null && customer !== undefined && customer + before + 1 > terms.max_redemptions_per_customer) {
    return 'customer_limit_reached';
  }
  return undefined;
}

export const fails = (assessment: Assessment) =>
  assessment.voided || assessment.tooMany !== undefined || assessment.outcomes.some((outcome) => outcome.kind === 'failed');

/** The codes a request would redeem now, with their terms and amounts. */
export const freshCodes = (assessment: Assessment) =>
  assessment.outcomes.flatMap((outcome) => (outcome.kind === 'fresh' ? [outcome as Extract<CodeOutcome, { kind: 'fresh' }>] : []));

/** What a code of a successful request gives: the discount and amount it recorded (held) or takes now. */
export function given(outcome: CodeOutcome): { discount: Discount; amount?: RecordedAmount } {
  if (outcome.kind === 'held') {
    const { held } = outcome;
    const discount = held.discount ?? { type: 'none' };
    return held.discount_amount === undefined ? { discount } : { discount, amount: { discount_amount: held.discount_amount, currency: held.currency! } };
  }
  const { terms, amount } = outcome as Extract<CodeOutcome, { kind: 'fresh' }>;
  return amount ? { discount: terms!.discount, amount } : { discount: terms!.discount };
}
