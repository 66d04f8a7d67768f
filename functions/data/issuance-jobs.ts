import { GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('counters');

/**
 * Issuance jobs (PRODUCT.md, "Bulk"): one item per job in the counters table,
 * `issuance-job#<account>#<id>`, beside one item per account that counts its running jobs,
 * `issuance-jobs-running#<account>` (at most MAX_RUNNING_JOBS: the job's creating transaction
 * raises it on that condition, its completing or failing transaction lowers it).
 *
 * A job is split into chunks of `chunk_size` codes (one SQS message each). The job's `issued`
 * grows by a chunk's size exactly once: the update that records a chunk adds its number to
 * `done_chunks` on the condition that it is not there yet. The job's codes are written pending
 * with `issuance_id` = the job's id; its issuance record (data/codes.ts) is written by the
 * transaction that completes the job, so none of them reads as issued before, and all of them do
 * after. `secret` derives the job's candidate codes (codes/issuance-job-codes.ts): never returned.
 */
export const MAX_RUNNING_JOBS = 3;

type IssuanceJobStatus = 'running' | 'completed' | 'failed';

export interface IssuanceJob {
  readonly name: string;
  readonly account_id: number;
  readonly id: number;
  readonly code_generator_id: number;
  readonly count: number;
  readonly issued: number;
  readonly status: IssuanceJobStatus;
  readonly error: string | null;
  readonly created_at: string;
  readonly completed_at: string | null;
  readonly chunk_size: number;
  /** Hex; the key of the job's candidate codes. */
  readonly secret: string;
  readonly done_chunks?: ReadonlySet<number>;
}

const jobName = (accountId: number, id: number) => `issuance-job#${accountId}#${id}`;
const runningName = (accountId: number) => `issuance-jobs-running#${accountId}`;

export function newIssuanceJob(accountId: number, id: number, generatorId: number, count: number, chunkSize: number, secret: string, now: Date): IssuanceJob {
  return {
    name: jobName(accountId, id),
    account_id: accountId,
    id,
    code_generator_id: generatorId,
    count,
    issued: 0,
    status: 'running',
    error: null,
    created_at: now.toISOString(),
    completed_at: null,
    chunk_size: chunkSize,
    secret,
  };
}

export const chunksOf = (job: Pick<IssuanceJob, 'count' | 'chunk_size'>) => Math.ceil(job.count / job.chunk_size);

/** The codes of one chunk: every chunk is full but the last. */
export const chunkLength = (job: Pick<IssuanceJob, 'count' | 'chunk_size'>, chunk: number) => Math.min(job.chunk_size, job.count - chunk * job.chunk_size);

/** Part of the creating transaction: the job, on the condition that its fresh id is free. */
export function putIssuanceJob(job: IssuanceJob): TransactItem {
  return { Put: { TableName: TABLE, Item: job, ConditionExpression: 'attribute_not_exists(#name)', ExpressionAttributeNames: { '#name': 'name' } } };
}

/** Part of the creating transaction: one more running job of the account, while it has fewer than MAX_RUNNING_JOBS. */
export function startRunningJob(accountId: number): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { name: runningName(accountId) },
      UpdateExpression: 'ADD running :one',
      ConditionExpression: 'attribute_not_exists(running) OR running < :max',
      ExpressionAttributeValues: { ':one': 1, ':max': MAX_RUNNING_JOBS },
    },
  };
}

const endRunningJob = (accountId: number): TransactItem => ({
  Update: { TableName: TABLE, Key: { name: runningName(accountId) }, UpdateExpression: 'ADD running :less', ExpressionAttributeValues: { ':less': -1 } },
});

/** The job as it is now (consistent), or undefined. */
export async function findIssuanceJob(accountId: number, id: number): Promise<IssuanceJob | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { name: jobName(accountId, id) }, ConsistentRead: true }));
  return Item as IssuanceJob | undefined;
}

/**
 * Records that a chunk's codes are all written: `issued` grows by its length once, whatever
 * copies of its message ran. Returns the job after the update, or undefined when the chunk was
 * recorded before or the job is no longer running (nothing changed).
 */
export async function recordChunk(accountId: number, id: number, chunk: number, length: number): Promise<IssuanceJob | undefined> {
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { name: jobName(accountId, id) },
        UpdateExpression: 'ADD issued :length, done_chunks :chunk',
        ConditionExpression: '#status = :running AND NOT contains(done_chunks, :number)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':length': length, ':chunk': new Set([chunk]), ':number': chunk, ':running': 'running' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes as IssuanceJob;
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw error;
  }
}

/**
 * Part of the completing transaction (with the issuance record, the event and the running count):
 * the job `completed`, on the condition that it is running with every code written.
 */
export const completeIssuanceJob = (job: IssuanceJob, completedAt: string): TransactItem[] =>
  endJob(job, 'completed', completedAt, { condition: ' AND issued = :count', values: { ':count': job.count } });

/** Part of the failing transaction (with the quota given back): the job `failed` with its reason, if still running. */
export const failIssuanceJob = (job: IssuanceJob, error: string, failedAt: string): TransactItem[] =>
  endJob(job, 'failed', failedAt, { set: ', #error = :error', values: { ':error': error } });

/** The job ended (its chunks forgotten), if it is still running, and the account's running jobs one fewer. */
function endJob(
  job: IssuanceJob,
  status: IssuanceJobStatus,
  at: string,
  more: { set?: string; condition?: string; values: Record<string, unknown> },
): TransactItem[] {
  return [
    {
      Update: {
        TableName: TABLE,
        Key: { name: job.name },
        UpdateExpression: `SET #status = :ended, completed_at = :at${more.set ?? ''} REMOVE done_chunks`,
        ConditionExpression: `#status = :running${more.condition ?? ''}`,
        ExpressionAttributeNames: { '#status': 'status', ...(more.set ? { '#error': 'error' } : {}) },
        ExpressionAttributeValues: { ':ended': status, ':at': at, ':running': 'running', ...more.values },
      },
    },
    endRunningJob(job.account_id),
  ];
}

/**
 * The running jobs of every account: the local stack's start hands each to the queue again (its
 * in-process queue loses what a killed process held; SQS in AWS does not). A Scan of the counters
 * table, a small table (ids, per-account counts, live guessing-limit minutes and jobs): never on a
 * request's path.
 */
export async function runningIssuanceJobs(): Promise<Pick<IssuanceJob, 'account_id' | 'id'>[]> {
  const found: Pick<IssuanceJob, 'account_id' | 'id'>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({
        TableName: TABLE,
        FilterExpression: 'begins_with(#name, :prefix) AND #status = :running',
        ExpressionAttributeNames: { '#name': 'name', '#status': 'status' },
        ExpressionAttributeValues: { ':prefix': 'issuance-job#', ':running': 'running' },
        ProjectionExpression: 'account_id, id',
        ExclusiveStartKey: start,
      }),
    );
    found.push(...((page.Items ?? []) as Pick<IssuanceJob, 'account_id' | 'id'>[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}
