import { giveBackToCodeQuota } from '#data/code-quota';
import { newJobCodeItem, putIssuance, putJobCode } from '#data/codes';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { chunkLength, chunksOf, completeIssuanceJob, failIssuanceJob, findIssuanceJob, recordChunk, type IssuanceJob } from '#data/issuance-jobs';
import { writeTogether } from '#data/transactions';
import { numberFromEnv } from '#runtime/config';
import { logger } from '#runtime/observability';
import { messageWorker } from '#runtime/message-worker';
import type { CodeSettings } from './code-shapes.ts';
import { generatorSettings } from './generator-settings.ts';
import { jobCandidate } from './issuance-job-codes.ts';
import { sendJobChunks, sendJobStartAgain, type IssuanceJobMessage } from './issuance-job-messages.ts';
import { allOrFirstError } from './side-by-side.ts';

/**
 * The `issuanceJobs` queue → issuance jobs (create-issuance-job.ts; messages:
 * issuance-job-messages.ts). A chunk's codes are written one conditional PutItem each, never a
 * transaction: pending of the job's issuance, naming their slot, with their index key set. A
 * candidate another code holds moves its slot to its next candidate; one this job's own earlier
 * copy of the chunk wrote for the same slot is that slot's code (issuance-job-codes.ts). Then the
 * chunk is recorded on the job once; the chunk that makes `issued` reach `count` completes the job
 * in one transaction: its issuance record (from then on every code of the job reads as issued,
 * with the record's issued_at, the job's completed_at), its codes.issued event, the job
 * `completed` and the account's running jobs one fewer. The codes were taken from the quota when
 * the job was created.
 *
 * A slot that finds no free candidate within its attempts, or a chunk whose fresh candidates are
 * nearly all taken, fails the job (the space is exhausted): one transaction marks it `failed`
 * with the reason, gives its codes back to the quota and lowers the running jobs. Its codes
 * already written never read as issued (no issuance record); they stay in the table as items no
 * issuance may take again (docs/bulk.md, "A failed job").
 *
 * A message that fails (a throttled or unreachable table) sends a copy of itself 2, 4, 8, then
 * 16 s later (#runtime/message-worker, as every message worker); after those it is reported and
 * comes back after the queue's visibility timeout, five times at most before the dead-letter
 * queue (alarm; the job then waits, `running`, until the message is redriven: docs/operations.md).
 */
export const handler = messageWorker<IssuanceJobMessage>(
  'runIssuanceJobs',
  async (message) => {
    if (message.kind === 'start') await start(message);
    else await runChunk(message);
  },
  ({ message, error, retry, next }) => {
    const details = {
      ...(message ? { account_id: message.account_id, issuance_job_id: message.job_id, ...(message.kind === 'chunk' ? { chunk: message.chunk } : {}) } : {}),
      retry,
      error,
    };
    if (next.by === 'copy')
      logger.warn(`issuance job message not done; a copy is sent again in ${next.delaySeconds} s`, { ...details, error_code: 'issuance_job_retried' });
    else
      logger.error('issuance job message not done; the queue hands it over again', {
        ...details,
        receive_count: next.receiveCount,
        error_code: 'issuance_job_stalled',
      });
  },
);

/** Candidates one slot tries before the job counts its space as exhausted. */
const ATTEMPTS = 64;
/**
 * The space counts as exhausted when this share of a chunk's candidates were taken, once enough
 * were tried to tell (ISSUANCE_JOB_FULL_SHARE: a test lowers it, to reach a full space sooner).
 */
const FULL_SHARE = numberFromEnv('ISSUANCE_JOB_FULL_SHARE', 0.9);
const FULL_SAMPLE = 100;
/**
 * Conditional puts of one chunk in flight at once (ISSUANCE_JOB_PUTS_IN_FLIGHT, 16): with the
 * worker's 5 invocations, 80 at most.
 */
const PUTS_IN_FLIGHT = Math.max(1, Math.floor(numberFromEnv('ISSUANCE_JOB_PUTS_IN_FLIGHT', 16)));

const EXHAUSTED =
  "The code space is exhausted: too few codes of this generator's shape are left free in the account to issue that many; issue fewer, or use a longer code_length";

class SpaceExhausted extends Error {}

async function start(message: IssuanceJobMessage & { kind: 'start' }): Promise<void> {
  const job = await findIssuanceJob(message.account_id, message.job_id);
  if (!job) {
    if (Date.now() < message.settles_at) await sendJobStartAgain(message);
    else logger.info('issuance job never created: its request did not write it', { account_id: message.account_id, issuance_job_id: message.job_id });
    return;
  }
  if (job.status !== 'running') return;
  const pending = Array.from({ length: chunksOf(job) }, (_, chunk) => chunk).filter((chunk) => !job.done_chunks?.has(chunk));
  if (pending.length === 0) await complete(job);
  else await sendJobChunks(job.account_id, job.id, pending);
}

async function runChunk(message: IssuanceJobMessage & { kind: 'chunk' }): Promise<void> {
  const job = await findIssuanceJob(message.account_id, message.job_id);
  if (job?.status !== 'running') return;
  const length = chunkLength(job, message.chunk);
  if (!job.done_chunks?.has(message.chunk)) {
    const settings = await generatorSettings(job.account_id, job.code_generator_id, Number.POSITIVE_INFINITY);
    if (!settings) throw new Error(`Code generator ${job.code_generator_id} of issuance job ${job.id} not found`);
    try {
      await writeChunk(job, settings, message.chunk, length);
    } catch (error) {
      if (!(error instanceof SpaceExhausted)) throw error;
      await fail(job, EXHAUSTED);
      return;
    }
  }
  const after = (await recordChunk(job.account_id, job.id, message.chunk, length)) ?? (await findIssuanceJob(job.account_id, job.id));
  if (after?.status === 'running' && after.issued === after.count) await complete(after);
}

/** Every slot of the chunk has its code: written now, or by an earlier copy of this chunk. */
async function writeChunk(job: IssuanceJob, settings: CodeSettings, chunk: number, length: number): Promise<void> {
  const secret = Buffer.from(job.secret, 'hex');
  const first = chunk * job.chunk_size;
  const seen = { tried: 0, taken: 0 };
  const slots = Array.from({ length }, (_, i) => first + i);
  await allOrFirstError(slots, PUTS_IN_FLIGHT, async (slot) => {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const code = jobCandidate(secret, settings, slot, attempt);
      const put = await putJobCode(newJobCodeItem(job.account_id, job.code_generator_id, code, job.id, slot));
      seen.tried++;
      if (put.written) return;
      if (put.existing?.issuance_id === job.id && put.existing.slot === slot) return;
      seen.taken++;
      if (seen.tried >= FULL_SAMPLE && seen.taken >= FULL_SHARE * seen.tried) throw new SpaceExhausted();
    }
    throw new SpaceExhausted();
  });
}

async function complete(job: IssuanceJob): Promise<void> {
  const completedAt = new Date();
  const event = newEvent(await nextId(), job.account_id, 'codes.issued', String(job.code_generator_id), completedAt);
  const result = await writeTogether([
    ...completeIssuanceJob(job, completedAt.toISOString()),
    putIssuance(job.account_id, job.code_generator_id, job.id, completedAt.toISOString(), job.count, []),
    putEvent(event),
  ]);
  if (result.outcome === 'written') {
    logger.info('issuance job completed', {
      account_id: job.account_id,
      issuance_job_id: job.id,
      codes: job.count,
      ms: completedAt.getTime() - Date.parse(job.created_at),
    });
    return;
  }
  // Another copy completed it (or failed it) first: nothing to do.
  if (result.failed.has(0)) return;
  if (result.failed.has(3)) freshIdCollided('events', event.id);
  throw new Error(`issuance job ${job.id} not completed: ${[...result.failed.keys()].join(', ')}`);
}

async function fail(job: IssuanceJob, reason: string): Promise<void> {
  const result = await writeTogether([...failIssuanceJob(job, reason, new Date().toISOString()), giveBackToCodeQuota(job.account_id, job.count)]);
  if (result.outcome === 'written')
    logger.warn('issuance job failed', { account_id: job.account_id, issuance_job_id: job.id, error_code: 'issuance_job_failed', reason });
}
