import { numberFromEnv } from '#runtime/config';
import { queueConfigured, sendToQueue } from '#runtime/queue-client';

/**
 * The safety net of an issuance of more than one transaction (issue-codes.ts): its first codes
 * are written pending and read as issued once the transaction that completes it has written the
 * issuance record, but they enter the generator's list only when finalised, a step the request
 * takes after that transaction. A request cut off there (its deadline under saturating issuance,
 * a crash, a fault) used to leave them out of the list until a redemption finalised them.
 *
 * So before its first write the request sends one message to the `issuanceFinalisation` queue
 * (functions/queues.ts), delayed by FINALISATION_DELAY_SECONDS, naming the issuance. The
 * finaliseIssuances worker (finalise-issuances.ts) then reads the issuance record: absent, the
 * issuance is not complete (and once the request can no longer be running, never will be);
 * present, its `pending_codes` are the codes still to finalise, which the request removes once it
 * has finalised them itself. Sent first, the message exists whatever stops the request later; a
 * queue that refuses it fails the request before anything is written.
 */
export interface FinalisationCheck {
  readonly account_id: number;
  readonly code_generator_id: number;
  readonly issuance_id: number;
  /**
   * Epoch milliseconds after which the request can no longer complete the issuance (its Lambda
   * timeout, and a margin for a write the service applies after the request stopped waiting):
   * a record still absent then never comes.
   */
  readonly settles_at: number;
}

/**
 * How long the message waits (SQS DelaySeconds, at most 900): long enough for the request to
 * have finalised its codes itself in nearly every case (one GetItem of the record then suffices),
 * short enough that codes it did not finalise are listed within a minute. The local stack's tests
 * set it to 1.
 */
const FINALISATION_DELAY_SECONDS = Math.min(900, numberFromEnv('ISSUANCE_FINALISATION_DELAY_SECONDS', 30));

/** After the request's own time is up, what a write it sent may still take to land. */
const SETTLE_MARGIN_MS = 10_000;
/** The routes' Lambda timeout, when the invocation does not say (infra/constructs/function-with-log-group.ts). */
const ROUTE_TIMEOUT_MS = 10_000;

/**
 * Sends the check of one issuance. Where the queue is not configured (a local stack run without
 * its queue stand-ins: most test files and the bench) nothing is sent, and only the request's
 * own finalisation runs; the CDK stack configures it on issueCodes (an infra test checks it).
 */
export async function scheduleFinalisationCheck(
  issuance: { readonly accountId: number; readonly generatorId: number; readonly issuanceId: number },
  remainingMs: number | undefined,
  now = Date.now(),
): Promise<void> {
  if (!queueConfigured('issuanceFinalisation')) return;
  const check: FinalisationCheck = {
    account_id: issuance.accountId,
    code_generator_id: issuance.generatorId,
    issuance_id: issuance.issuanceId,
    settles_at: now + (remainingMs ?? ROUTE_TIMEOUT_MS) + SETTLE_MARGIN_MS,
  };
  await sendToQueue('issuanceFinalisation', [{ body: JSON.stringify(check), delaySeconds: FINALISATION_DELAY_SECONDS }]);
}

/** The check again, later: its issuance could still complete (the message came before the request's time was up). */
export async function checkAgainLater(check: FinalisationCheck, now = Date.now()): Promise<void> {
  const waitSeconds = Math.max(1, Math.min(FINALISATION_DELAY_SECONDS, Math.ceil((check.settles_at - now) / 1000)));
  await sendToQueue('issuanceFinalisation', [{ body: JSON.stringify(check), delaySeconds: waitSeconds }]);
}
