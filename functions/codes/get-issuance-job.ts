import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findIssuanceJob } from '#data/issuance-jobs';
import { presentIssuanceJob } from './presenters.ts';
import idPath from '#http/schemas/idPath.generated';

/** GET /v1.0/issuance_jobs/{id}: the job's progress (`issued` never decreases), then `completed` or `failed`. One consistent GetItem. */
export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getIssuanceJob', params: idPath }).handler(async (event, context) => {
  const { id } = event.params;
  const job = await findIssuanceJob(context.accountId, id);
  if (!job) throw notFound(`Issuance job ${id} not found`);
  return ok({ issuance_job: presentIssuanceJob(job) });
});
