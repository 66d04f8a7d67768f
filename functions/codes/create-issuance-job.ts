import { randomBytes } from 'node:crypto';
import { api } from '#http/chain';
import { conflict, serviceUnavailable } from '#http/errors';
import { generatorIsActive } from '#data/code-generators';
import { codeQuotaRoom, quotaRefusal, takeFromCodeQuota } from '#data/code-quota';
import { findStoredResponse, newStoredResponse, putStoredResponse } from '#data/idempotency-keys';
import { freshIdCollided, nextId } from '#data/ids';
import { MAX_RUNNING_JOBS, newIssuanceJob, putIssuanceJob, startRunningJob } from '#data/issuance-jobs';
import { writeTogether } from '#data/transactions';
import { idempotencyScope, replay, storedResponseAfterConflict } from '#http/idempotency';
import { logger } from '#runtime/observability';
import { codeSpace } from './code-shapes.ts';
import { overQuota } from './code-quota.ts';
import { activeCodeSettings } from './generator-settings.ts';
import { chunkSizeFor, sendJobStart } from './issuance-job-messages.ts';
import { presentIssuanceJob } from './presenters.ts';
import issuanceJobCreate from '#http/schemas/issuanceJobCreate.generated';
import idPath from '#http/schemas/idPath.generated';

/**
 * POST /v1.0/codegen/{id}/issuance_jobs: up to 1,000,000 codes, issued by the runIssuanceJobs
 * worker (run-issuance-jobs.ts) and read as issued all together when the job completes.
 * The request checks what it can at once (404, 409 inactive, a count the shape's whole space
 * cannot hold, the quota), sends the job's start message (before any write: whatever stops the
 * request after, the message exists), then writes in one transaction the job, one more running
 * job of the account (at most 3, else 409), the codes taken from the account's quota (reserved
 * now, given back if the job fails: the count stays exact), the generator's status check and the
 * stored response of an Idempotency-Key. `202` with the job as it starts.
 */
export const handler = api<{ count: number }, { id: number }>({
  host: 'core',
  operationId: 'createIssuanceJob',
  params: idPath,
  body: issuanceJobCreate,
}).handler(async (event, context) => {
  const { id } = event.params;
  const { count } = event.body;
  const scope = idempotencyScope(event.headers, context.accountId, 'createIssuanceJob', { id, count });
  const settings = await activeCodeSettings(context.accountId, id, 'issue codes');
  if (count > codeSpace(settings)) {
    throw conflict(
      `Code generator ${id} can make ${codeSpace(settings)} distinct codes: a job of ${count} can never complete; ask for fewer, or use a longer code_length`,
    );
  }
  if (scope) {
    const earlier = await findStoredResponse(scope, new Date());
    if (earlier) return replay(earlier, scope);
  }
  const overflow = await codeQuotaRoom(context.accountId, count);
  if (overflow) throw overQuota(count, overflow);

  const jobId = await nextId();
  try {
    await sendJobStart(context.accountId, jobId, context.getRemainingTimeInMillis?.());
  } catch (error) {
    logger.error('the issuance job was not created: its start could not be queued', {
      error_code: 'issuance_job_not_queued',
      code_generator_id: id,
      error: error as Error,
    });
    throw serviceUnavailable();
  }
  const now = new Date();
  const job = newIssuanceJob(context.accountId, jobId, id, count, chunkSizeFor(count), randomBytes(32).toString('hex'), now);
  const location = `/v1.0/issuance_jobs/${jobId}`;
  const body = JSON.stringify({ issuance_job: presentIssuanceJob(job) });
  const stored = scope && newStoredResponse(scope, scope.requestHash, { statusCode: 202, body, location }, now);
  const result = await writeTogether([
    putIssuanceJob(job),
    startRunningJob(context.accountId),
    takeFromCodeQuota(context.accountId, count),
    generatorIsActive(context.accountId, id),
    ...(stored ? [putStoredResponse(stored)] : []),
  ]);
  if (result.outcome !== 'written') {
    const { failed } = result;
    if (scope && failed.has(4)) {
      const earlier = await storedResponseAfterConflict(failed.get(4), scope);
      if (earlier) return replay(earlier, scope);
    }
    if (failed.has(0)) {
      freshIdCollided('counters', jobId);
      throw serviceUnavailable();
    }
    if (failed.has(3)) throw conflict(`Code generator ${id} is inactive; activate it to issue codes`);
    if (failed.has(1)) {
      throw conflict(`This account has ${MAX_RUNNING_JOBS} issuance jobs running, the most it may; wait for one to complete (GET /v1.0/issuance_jobs/{id})`);
    }
    if (failed.has(2)) throw overQuota(count, quotaRefusal(failed.get(2)));
    throw serviceUnavailable();
  }
  return { statusCode: 202, rawJson: body, location };
});
