import type { Reply } from '#http/reply';
import type { CodeItem } from '#data/codes';
import type { HeldCode } from '#data/pos-transactions';
import { MAX_HELD_CODES } from '#data/pos-transactions';
import type { Assessment, CodeFailure, Till } from './assessment.ts';

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

export const codeRedeemed = (item: Pick<CodeItem, 'code' | 'code_generator_id'>, description: string, redeemedAt: string) =>
  display(`Code ${item.code} redeemed`, 'code_redeemed', {
    code: item.code,
    code_generator_id: item.code_generator_id,
    description,
    redeemed_at: redeemedAt,
  });

export const codeValid = (item: Pick<CodeItem, 'code' | 'code_generator_id'>, description: string) =>
  display(`Code ${item.code} is valid`, 'code_valid', { code: item.code, code_generator_id: item.code_generator_id, description });

export const codeReleased = (held: HeldCode) =>
  display(`Code ${held.code} released`, 'code_released', { code: held.code, code_generator_id: held.code_generator_id });

/** Per failure: the integration's message (`errors`) and the cashier's (`display_messages`). */
function describeFailure(failure: CodeFailure): { error: string; display: DisplayMessage } {
  switch (failure.reason) {
    case 'code_not_found':
      return {
        error: `Code ${failure.typed} is not an issued code of this account`,
        display: display(
          `Code ${failure.typed} is not a valid code. Check that it was scanned or typed correctly; otherwise do not accept it.`,
          'code_not_found',
          { code: failure.typed },
        ),
      };
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
  for (const outcome of assessment.outcomes) if (outcome.kind === 'failed') entries.push(describeFailure(outcome.failure));
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
