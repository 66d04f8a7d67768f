import { codeSpelling, type CodeItem } from '#data/codes';
import { MAX_HELD_CODES, transactionKey, type PosTransaction } from '#data/pos-transactions';
import type { RedemptionState } from '#data/redemptions';

/**
 * The decisions of a redemption and of a check, from what one read found (data/redemptions.ts):
 * which listed codes this transaction holds already, which it would take now, and which fail
 * and why. Plain functions of the state; the handlers write, the messages module words.
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

export type CodeFailure =
  | { readonly reason: 'code_not_found'; readonly typed: string }
  | { readonly reason: 'code_already_redeemed' | 'code_generator_inactive'; readonly item: CodeItem };

/** A listed code's outcome: held by this transaction already, to be redeemed now, or failed. */
type CodeOutcome =
  | { readonly kind: 'held'; readonly item: CodeItem }
  | { readonly kind: 'fresh'; readonly item: CodeItem }
  | { readonly kind: 'failed'; readonly failure: CodeFailure };

export interface Assessment {
  readonly outcomes: CodeOutcome[];
  readonly voided: boolean;
  /** Set when the transaction would hold more than MAX_HELD_CODES. */
  readonly tooMany?: { readonly held: number; readonly adding: number };
  readonly transaction?: PosTransaction;
}

export interface Till {
  readonly accountId: number;
  readonly siteId: string;
  readonly posTransactionId: string;
}

export function assess(till: Till, listed: readonly ListedCode[], state: RedemptionState): Assessment {
  const me = transactionKey(till.accountId, till.siteId, till.posTransactionId);
  const outcomes = listed.map((code): CodeOutcome => {
    const item = code.spelling === undefined ? undefined : state.codes.get(code.spelling);
    if (!item) return { kind: 'failed', failure: { reason: 'code_not_found', typed: code.typed } };
    if (item.holder === me) return { kind: 'held', item };
    if (item.holder !== undefined) return { kind: 'failed', failure: { reason: 'code_already_redeemed', item } };
    return { kind: 'fresh', item };
  });
  const held = state.transaction?.codes?.length ?? 0;
  const adding = outcomes.filter((outcome) => outcome.kind === 'fresh').length;
  return {
    outcomes,
    voided: state.transaction?.voided_at !== undefined,
    ...(held + adding > MAX_HELD_CODES ? { tooMany: { held, adding } } : {}),
    ...(state.transaction ? { transaction: state.transaction } : {}),
  };
}

export const fails = (assessment: Assessment) =>
  assessment.voided || assessment.tooMany !== undefined || assessment.outcomes.some((outcome) => outcome.kind === 'failed');

/** The same assessment with the fresh codes of these generators failed as inactive. */
export function withInactive(assessment: Assessment, inactive: ReadonlySet<number>): Assessment {
  return {
    ...assessment,
    outcomes: assessment.outcomes.map((outcome) =>
      outcome.kind === 'fresh' && inactive.has(outcome.item.code_generator_id)
        ? { kind: 'failed', failure: { reason: 'code_generator_inactive', item: outcome.item } }
        : outcome,
    ),
  };
}

/** The generators of the codes a request would redeem now. */
export const freshGenerators = (assessment: Assessment) => [
  ...new Set(assessment.outcomes.flatMap((outcome) => (outcome.kind === 'fresh' ? [outcome.item.code_generator_id] : []))),
];
