import type { Reply } from '#http/reply';
import type { CodeItem, RecordedAmount } from '#data/codes';
import type { Discount } from '#data/code-generators';
import type { HeldCode } from '#data/pos-transactions';
import { MAX_HELD_CODES } from '#data/pos-transactions';
import type { Assessment, CodeFailure, Till } from './assessment.ts';
import { formatAmount, formatMoment } from './terms.ts';

/**
 * What the till shows for redemptions, checks and released codes: the pos host's envelope
 * (`{"transaction":{"errors":[…],"display_messages":[…]}}`) with one display message per code,
 * in the order the codes were listed. A failure answer has one `errors` entry and one display
 * message per failing code, plus one for the transaction when it was voided or would hold too
 * many codes; it is 422 when a code does not exist, else 409. The cashier texts say what to do,
 * and never suggest a retry that cannot succeed.
 */
interface DisplayMessage {
  readonly message: string;
  readonly message_id: string;
  readonly message_content: Record<string, unknown>;
  readonly priority: number;
}

const display = (message: string, message_id: string, message_content: Record<string, unknown>): DisplayMessage => ({
  message,
  message_id,
  message_content,
  priority: 1,
});

export const success = (messages: DisplayMessage[]): Reply => ({
  statusCode: 200,
  body: { transaction: { errors: [], display_messages: messages } },
});

/** What a code gives: the promotion's discount and, when a basket was sent and it takes something off, the amount. */
export interface Given {
  readonly discount: Discount;
  readonly amount?: RecordedAmount;
}

const off = (given: Given) => (given.amount ? `: ${formatAmount(given.amount.discount_amount, given.amount.currency)} off` : '');
const givenContent = (given: Given) => ({ discount: given.discount, ...(given.amount ?? {}) });

export const codeRedeemed = (item: Pick<CodeItem, 'code' | 'code_generator_id'>, description: string, redeemedAt: string, given: Given) =>
  display(`Code ${item.code} redeemed${off(given)}`, 'code_redeemed', {
    code: item.code,
    code_generator_id: item.code_generator_id,
    description,
    redeemed_at: redeemedAt,
    ...givenContent(given),
  });

export const codeValid = (item: Pick<CodeItem, 'code' | 'code_generator_id'>, description: string, given: Given) =>
  display(`Code ${item.code} is valid${off(given)}`, 'code_valid', {
    code: item.code,
    code_generator_id: item.code_generator_id,
    description,
    ...givenContent(given),
  });

export const codeReleased = (held: HeldCode) =>
  display(`Code ${held.code} released`, 'code_released', { code: held.code, code_generator_id: held.code_generator_id });

/** Per failure: the integration's message (`errors`) and the cashier's (`display_messages`). */
function describeFailure(till: Till, failure: CodeFailure): { error: string; display: DisplayMessage } {
  if (failure.reason === 'code_not_found') {
    return {
      error: `Code ${failure.typed} is not an issued code of this account`,
      display: display(
        `Code ${failure.typed} is not a valid code. Check that it was scanned or typed correctly; otherwise do not accept it.`,
        'code_not_found',
        { code: failure.typed },
      ),
    };
  }
  const { item, terms } = failure;
  const code = item.code;
  const about = { code, code_generator_id: item.code_generator_id };
  const entry = (error: string, cashier: string, content: Record<string, unknown> = {}) => ({
    error,
    display: display(cashier, failure.reason, { ...about, ...content }),
  });
  const minimum = terms.minimum_basket;
  switch (failure.reason) {
    case 'code_not_yet_valid':
      return entry(
        `Code ${code} belongs to code generator ${item.code_generator_id}, valid from ${terms.valid_from}`,
        `Code ${code} is valid from ${formatMoment(terms.valid_from!)}. Do not accept it before then.`,
        { valid_from: terms.valid_from },
      );
    case 'code_expired':
      return entry(
        `Code ${code} belongs to code generator ${item.code_generator_id}, valid until ${terms.valid_until}`,
        `Code ${code} expired on ${formatMoment(terms.valid_until!)}. Do not accept it.`,
        { valid_until: terms.valid_until },
      );
    case 'code_not_valid_at_site':
      return entry(
        `Code ${code} belongs to code generator ${item.code_generator_id}, which does not list site ${till.siteId}`,
        `Code ${code} cannot be used in this store. Do not accept it here.`,
        { site_id: till.siteId },
      );
    case 'basket_required':
      return entry(
        `Code ${code} needs a minimum basket of ${formatAmount(minimum!.amount, minimum!.currency)}, and the transaction has no basket`,
        `Code ${code} applies only to sales of ${formatAmount(minimum!.amount, minimum!.currency)} or more, and this till did not send the sale's total. Call support: the till must send the basket with the code.`,
        { minimum_basket: minimum },
      );
    case 'currency_mismatch': {
      const currency = terms.discount.type !== 'none' && terms.discount.currency !== undefined ? terms.discount.currency : minimum!.currency;
      return entry(
        `Code ${code} is for amounts in ${currency}; the basket is in ${till.basket!.currency}`,
        `Code ${code} is for sales in ${currency}, and this sale is in ${till.basket!.currency}. Do not accept it.`,
        { currency, basket_currency: till.basket!.currency },
      );
    }
    case 'basket_below_minimum':
      return entry(
        `Code ${code} needs a basket of at least ${formatAmount(minimum!.amount, minimum!.currency)}; the basket is ${formatAmount(till.basket!.total, till.basket!.currency)}`,
        `Code ${code} applies only to sales of ${formatAmount(minimum!.amount, minimum!.currency)} or more; this sale is ${formatAmount(till.basket!.total, till.basket!.currency)}. Add items, or do not accept it.`,
        { minimum_basket: minimum, basket_total: till.basket!.total },
      );
  }
  switch (failure.reason) {
    case 'customer_required':
      return entry(
        `Code ${code} belongs to code generator ${item.code_generator_id}, which limits uses per customer (${terms.max_redemptions_per_customer}), and the transaction has no customer_id`,
        `Code ${code} needs the customer's loyalty card or customer number. Scan it, then the code again.`,
        { max_redemptions_per_customer: terms.max_redemptions_per_customer },
      );
    case 'code_usage_limit_reached':
      return entry(
        `Code ${code} is held by as many transactions as its maximum (${terms.max_redemptions_per_code})`,
        `Code ${code} has been used as many times as allowed (${terms.max_redemptions_per_code}). Do not accept it.`,
        { max_redemptions_per_code: terms.max_redemptions_per_code },
      );
    case 'promotion_budget_exhausted':
      return entry(
        `Code ${code} belongs to code generator ${item.code_generator_id}, whose budget of ${terms.max_redemptions} redemptions is used up`,
        `The promotion of code ${code} has been used up. Do not accept it.`,
        { max_redemptions: terms.max_redemptions },
      );
    case 'customer_limit_reached':
      return entry(
        `The customer holds as many uses of code generator ${item.code_generator_id} as its limit per customer (${terms.max_redemptions_per_customer})`,
        `This customer has already used this promotion as often as allowed (${terms.max_redemptions_per_customer}). Do not accept code ${code} for them.`,
        { max_redemptions_per_customer: terms.max_redemptions_per_customer },
      );
  }
  switch (failure.reason) {
    case 'code_already_redeemed':
      return {
        error: `Code ${failure.item.code} is redeemed by another transaction`,
        display: display(`Code ${failure.item.code} was already used in another sale. Do not accept it.`, 'code_already_redeemed', {
          code: failure.item.code,
          code_generator_id: failure.item.code_generator_id,
        }),
      };
    case 'code_generator_inactive':
      return {
        error: `Code ${failure.item.code} belongs to code generator ${failure.item.code_generator_id}, which is inactive`,
        display: display(`Code ${failure.item.code} belongs to a promotion that is not active. Do not accept it.`, 'code_generator_inactive', {
          code: failure.item.code,
          code_generator_id: failure.item.code_generator_id,
        }),
      };
  }
}

export function failure(till: Till, assessment: Assessment): Reply {
  const entries: { error: string; display: DisplayMessage }[] = [];
  if (assessment.voided) {
    entries.push({
      error: `Transaction ${till.posTransactionId} of site ${till.siteId} was voided; no code can be redeemed on it`,
      display: display(
        `Transaction ${till.posTransactionId} was voided: no code can be redeemed on it. Start a new sale for these codes.`,
        'transaction_voided',
        { site_id: till.siteId, pos_transaction_id: till.posTransactionId },
      ),
    });
  }
  for (const outcome of assessment.outcomes) if (outcome.kind === 'failed') entries.push(describeFailure(till, outcome.failure));
  if (assessment.tooMany) {
    const { held, adding } = assessment.tooMany;
    entries.push({
      error: `Transaction ${till.posTransactionId} holds ${held} codes and this request adds ${adding}; a transaction holds at most ${MAX_HELD_CODES}`,
      display: display(
        `A sale can hold at most ${MAX_HELD_CODES} codes: this one holds ${held}, and ${adding} more would be too many. Take these codes in another sale.`,
        'too_many_codes',
        { held, adding, limit: MAX_HELD_CODES },
      ),
    });
  }
  const notFound = assessment.outcomes.some((outcome) => outcome.kind === 'failed' && outcome.failure.reason === 'code_not_found');
  return {
    statusCode: notFound ? 422 : 409,
    body: { transaction: { errors: entries.map(({ error }) => ({ message: error })), display_messages: entries.map(({ display }) => display) } },
  };
}
