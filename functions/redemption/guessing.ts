import { tooManyUnknownCodes } from '#http/errors';
import type { Reply } from '#http/reply';
import { countUnknownCodes, UNKNOWN_CODE_LIMIT, UNKNOWN_CODE_WINDOW_SECONDS } from '#data/unknown-codes';
import type { Assessment, Till } from './assessment.ts';
import { failure } from './messages.ts';

/**
 * The answer to a refused redemption or check, through the guessing limit (docs/security.md, "No
 * guessing codes"): a request naming codes that are not found counts them (each once: the listed
 * codes are distinct) for its token, and past the limit answers 429 instead of naming them. A
 * refusal without an unknown code, and every request whose codes all exist, never touch the count.
 */
export async function refusal(keyId: string, till: Till, assessment: Assessment): Promise<Reply> {
  const unknown = assessment.outcomes.filter((outcome) => outcome.kind === 'failed' && outcome.failure.reason === 'code_not_found').length;
  if (unknown > 0) {
    const verdict = await countUnknownCodes(keyId, unknown);
    if (!verdict.allowed) throw tooManyUnknownCodes(verdict.retryAfterSeconds, UNKNOWN_CODE_LIMIT, UNKNOWN_CODE_WINDOW_SECONDS);
  }
  return failure(till, assessment);
}
