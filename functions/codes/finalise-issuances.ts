import { findIssuance, finalisePendingCode, forgetPendingCodes } from '#data/codes';
import { logger } from '#runtime/observability';
import { messageWorker } from '#runtime/message-worker';
import { checkAgainLater, type FinalisationCheck } from './issuance-finalisation.ts';
import { allOrFirstError } from './side-by-side.ts';

/** UpdateItems in flight at once for one issuance: at most 902 codes, about a second in AWS. */
const SIDE_BY_SIDE = 10;

/**
 * The `issuanceFinalisation` queue → the pending codes an issuance's request did not finalise
 * (issuance-finalisation.ts). For each message, the issuance record (one consistent GetItem):
 * - absent: the issuance is not complete. Until the request's time is up it still may be, and
 *   the check is sent again, delayed; after, it never will be, and its pending codes never read as
 *   issued: nothing to do.
 * - without `pending_codes`: the request finalised them itself (the common case).
 * - with them: each is finalised (data/codes.ts, finalisePendingCode: an Update that keeps a
 *   redemption's state, then the redeemed state its uses call for), then the record stops naming
 *   them. Every step is safe to repeat, so a second copy of the message, a retry after a failure,
 *   the request's own late finalisation and a redemption racing it all end in the same state.
 * A message that fails sends a copy of itself 2, 4, 8, then 16 s later (#runtime/message-worker,
 * as every message worker); after those it is reported and comes back after the queue's
 * visibility timeout, five times at most before its dead-letter queue, which has an alarm.
 */
export const handler = messageWorker<FinalisationCheck>(
  'finaliseIssuances',
  (check) => finaliseIssuance(check, names(check)),
  ({ message, error, retry, next }) => {
    const details = { ...(message ? names(message) : {}), error_code: 'issuance_not_finalised', retry, error };
    if (next.by === 'copy') logger.warn(`pending codes of an issuance not finalised yet; a copy of the check is sent again in ${next.delaySeconds} s`, details);
    else logger.error('pending codes of an issuance not finalised yet; the queue hands the check over again', { ...details, receive_count: next.receiveCount });
  },
);

const names = (check: FinalisationCheck) => ({ account_id: check.account_id, code_generator_id: check.code_generator_id, issuance_id: check.issuance_id });

async function finaliseIssuance(check: FinalisationCheck, names: Record<string, number>): Promise<void> {
  const now = Date.now();
  const issuance = await findIssuance(check.account_id, check.code_generator_id, check.issuance_id);
  if (!issuance) {
    if (now < check.settles_at) await checkAgainLater(check, now);
    else logger.info('issuance never completed: no pending code of it reads as issued', names);
    return;
  }
  const pending = [...(issuance.pending_codes ?? [])];
  if (pending.length === 0) return;
  let absent = 0;
  await allOrFirstError(pending, SIDE_BY_SIDE, async (code) => {
    if (!(await finalisePendingCode(check.account_id, check.code_generator_id, check.issuance_id, code))) absent++;
  });
  await forgetPendingCodes(check.account_id, check.code_generator_id, check.issuance_id, new Date(now));
  logger.warn('pending codes of an issuance finalised by the worker: its request had not', {
    ...names,
    error_code: 'issuance_finalised_late',
    codes: pending.length,
    late_ms: now - Date.parse(issuance.issued_at),
    ...(absent > 0 ? { not_found: absent } : {}),
  });
}
