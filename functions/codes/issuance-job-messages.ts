import { numberFromEnv } from '#runtime/config';
import { queueConfigured, sendToQueue } from '#runtime/queue-client';

/**
 * The messages of the `issuanceJobs` queue (functions/queues.ts), which the runIssuanceJobs
 * worker consumes (run-issuance-jobs.ts):
 * - `start`: sent by the creating request before its first write, so that it exists whatever
 *   stops the request later (a queue that refuses it fails the request with nothing written). The
 *   worker sends one `chunk` message per chunk not yet recorded. Until `settles_at` a start that
 *   finds no job yet (the request may still be writing it) comes back a second later; after,
 *   there never will be one.
 * - `chunk`: the codes of one chunk written, then the chunk recorded once on the job; the
 *   message that records the last chunk completes the job.
 * Every message is safe to handle twice or side by side with a copy of itself (a failed message
 * sends copies of itself: #runtime/message-worker, `retry`).
 */
export type IssuanceJobMessage =
  | { readonly kind: 'start'; readonly account_id: number; readonly job_id: number; readonly settles_at: number }
  | { readonly kind: 'chunk'; readonly account_id: number; readonly job_id: number; readonly chunk: number };

/** ISSUANCE_JOB_CHUNK_SIZE: one size for every job (the tests'). */
const FIXED_CHUNK_SIZE = Math.floor(numberFromEnv('ISSUANCE_JOB_CHUNK_SIZE', 0));
/** The worker's concurrency (functions/workers.ts, runIssuanceJobs): a small job is split so that they all take part. */
const WORKERS = 5;

/**
 * Codes per chunk (one message, one invocation of the worker): 1,000 for a large job, and for
 * a job of fewer than 5,000 codes a fifth of it (at least 100), so that the worker's 5
 * concurrent invocations share it. Kept with the job: a chunk's slots never move.
 */
export const chunkSizeFor = (count: number): number => (FIXED_CHUNK_SIZE >= 1 ? FIXED_CHUNK_SIZE : Math.min(1000, Math.max(100, Math.ceil(count / WORKERS))));

/** After the request's own time is up, what a write it sent may still take to land. */
const SETTLE_MARGIN_MS = 10_000;
/** The routes' Lambda timeout, when the invocation does not say. */
const ROUTE_TIMEOUT_MS = 10_000;

/**
 * Where the queue is not configured (a local stack run without its queue stand-ins: most test
 * files and the bench) nothing is sent: the job stays `running` until a stack with the queue
 * resumes it (npm start does, local/issuance-jobs.ts). The CDK stack configures it.
 */
export async function sendJobStart(accountId: number, jobId: number, remainingMs: number | undefined, now = Date.now()): Promise<void> {
  if (!queueConfigured('issuanceJobs')) return;
  const message: IssuanceJobMessage = {
    kind: 'start',
    account_id: accountId,
    job_id: jobId,
    settles_at: now + (remainingMs ?? ROUTE_TIMEOUT_MS) + SETTLE_MARGIN_MS,
  };
  await sendToQueue('issuanceJobs', [{ body: JSON.stringify(message) }]);
}

/** A start that found no job yet, a second later. */
export async function sendJobStartAgain(message: IssuanceJobMessage & { kind: 'start' }): Promise<void> {
  await sendToQueue('issuanceJobs', [{ body: JSON.stringify(message), delaySeconds: 1 }]);
}

export async function sendJobChunks(accountId: number, jobId: number, chunks: readonly number[]): Promise<void> {
  await sendToQueue(
    'issuanceJobs',
    chunks.map((chunk) => ({ body: JSON.stringify({ kind: 'chunk', account_id: accountId, job_id: jobId, chunk } satisfies IssuanceJobMessage) })),
  );
}
