import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { localClient, scanAll, tableNamesWithPrefix } from '../../../local/dynamodb.ts';
import { localSettings } from '../../../local/settings.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call } from '../../support/http.ts';
import { npmStart, type NpmStart } from '../../support/npm-start.ts';

/**
 * Issue 26, "a crash of a worker midway (killed) is resumed, not doubled": the local stack as
 * `npm start` boots it (local/start.ts in a process of its own, DynamoDB Local's data on disk in a
 * scratch directory: test/support/npm-start.ts) runs an issuance job; once some of its chunks are
 * recorded and others half-written, every process of the stack is killed with SIGKILL at once
 * (tsx, the node process whose in-process queue and workers run the job, DynamoDB Local's JVM), as
 * a crash of the machine: the worker dies mid-chunk and the queue's messages die with it. Then
 * `npm start` again on the same data: it must resume the job (local/issuance-jobs.ts logs
 * "Resumed …"), which ends `completed` with `issued` = count; the codes table holds exactly count
 * codes of the job, one per slot; the list route lists exactly those; one `codes.issued` event;
 * the account's issued-codes counter = count and no job left running.
 *
 * Would catch: a start that does not resume running jobs (the job stays `running`: checked by
 * removing the call from local/start.ts, docs/issuance-jobs.md); a redone chunk that writes fresh
 * codes beside its half-written ones (more than count codes, two for a slot: checked by
 * removing the "this slot's own code" test from run-issuance-jobs.ts); a chunk counted twice or
 * a job completed twice (`issued`, the event, the counter).
 *
 * DynamoDB Local killed with SIGKILL can lose a TransactWriteItems acknowledged a few ms before
 * (README, "npm start"; no PutItem in the measurement). At the kill this job has only put codes
 * and recorded chunks (UpdateItem): a lost chunk record is redone, which is the case under test.
 *
 * Sized for time, on a 2-core machine shared with other work, where a freshly started DynamoDB
 * Local on disk takes 20 to 50 conditional puts a second: 300 codes (ISSUANCE_JOB_KILL_CODES) in
 * chunks of 15 (ISSUANCE_JOB_CHUNK_SIZE; a job under 5,000 codes is otherwise 5 chunks that all
 * finish at about the same time, leaving no "some recorded, some half-written" moment), 4 puts
 * in flight per chunk (ISSUANCE_JOB_PUTS_IN_FLIGHT; 16 by default: 80 puts queued at a cold
 * DynamoDB Local on a loaded machine answer after more than the client's 2 s, the chunk fails
 * and comes back only after the queue's 360 s, as in AWS: the job pauses, which is not what this
 * test is about). Budget: 45 s; most of it is npm start booting twice (DynamoDB Local's JVM).
 */
const COUNT = Number(process.env.ISSUANCE_JOB_KILL_CODES ?? 300);
const CHUNK = 15;
const PREFIX = 'killjob-';
const names = tableNamesWithPrefix(PREFIX);
const accountId = localSettings().devAccountId;

const directory = mkdtempSync(join(tmpdir(), 'tillgate-killjob-'));
let stack: NpmStart | undefined;
afterAll(async () => {
  await stack?.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** What the stack printed but its request log. */
const logged = () => stack!.lines.filter((line) => !line.includes('"message":"gateway"')).join('\n');

const start = () =>
  npmStart(directory, {
    tablePrefix: PREFIX,
    env: { ISSUANCE_JOB_CHUNK_SIZE: String(CHUNK), ISSUANCE_JOB_PUTS_IN_FLIGHT: '4', POWERTOOLS_LOG_LEVEL: process.env.ISSUANCE_JOB_KILL_LOG_LEVEL ?? 'WARN' },
  });

async function request(method: string, path: string, body?: unknown) {
  for (let attempt = 1; ; attempt++) {
    const response = await call(stack!.api, 'core', method, path, { token: stack!.token, ...(body === undefined ? {} : { body }) });
    if (response.status !== 503 || attempt >= 8) return response;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
async function readJob(jobId: number): Promise<{ status: string; issued: number; count: number; completed_at: string | null }> {
  const read = await request('GET', `/v1.0/issuance_jobs/${jobId}`);
  expect(read.status, read.text).toBe(200);
  return read.json.issuance_job;
}
async function listed(generatorId: number): Promise<string[]> {
  const codes: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await request('GET', `/v1.0/codegen/${generatorId}/codes?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.status, page.text).toBe(200);
    codes.push(...(page.json.codes as { code: string }[]).map((c) => c.code));
    cursor = page.json.next_cursor;
  } while (cursor);
  return codes;
}

/** The stack's own DynamoDB Local, read straight. */
function database(endpoint: string) {
  const documents = DynamoDBDocumentClient.from(localClient(endpoint));
  return {
    jobItems: async (jobId: number) =>
      scanAll(documents, {
        TableName: names.codes,
        FilterExpression: 'account_id = :a AND issuance_id = :j AND attribute_exists(slot)',
        ExpressionAttributeValues: { ':a': accountId, ':j': jobId },
      }),
    counter: async (name: string, attribute: string) =>
      Number((await documents.send(new GetCommand({ TableName: names.counters, Key: { name }, ConsistentRead: true }))).Item?.[attribute] ?? 0),
    events: async () =>
      ((
        await documents.send(
          new QueryCommand({ TableName: names.events, KeyConditionExpression: 'account_id = :a', ExpressionAttributeValues: { ':a': accountId } }),
        )
      ).Items ?? []) as { type: string; resource_id: string }[],
    close: () => documents.destroy(),
  };
}

describe('an issuance job whose stack is killed midway', () => {
  it('is resumed by the next npm start and completes with exactly count codes, one per slot, listed once, one event', { timeout: 240_000 }, async () => {
    const began = Date.now();
    stack = await start();
    const firstStartMs = stack.startedInMs;
    const generator = await request('POST', '/v1.0/codegen', { code_generator: { ...winterPromotion, prefix: 'KILL-' } });
    expect(generator.status, generator.text).toBe(201);
    const generatorId = generator.json.code_generator.id as number;
    const created = await request('POST', `/v1.0/codegen/${generatorId}/issuance_jobs`, { count: COUNT });
    expect(created.status, created.text).toBe(202);
    const jobId = created.json.issuance_job.id as number;
    const createdAt = Date.now();

    // Midway: some chunks recorded (`issued` > 0), and more codes written than recorded (chunks
    // half-written), the job still running. Then kill everything at once.
    const before = database(stack.dynamodbEndpoint);
    let atKill: { issued: number; written: number; ms: number } | undefined;
    for (const deadline = Date.now() + 60_000; !atKill; ) {
      const job = await readJob(jobId);
      if (job.status !== 'running') throw new Error(`the job ended (${job.status}) before it could be killed midway: raise ISSUANCE_JOB_KILL_CODES`);
      if (Date.now() > deadline) throw new Error(`issuance job ${jobId} not midway 60 s after its 202: ${JSON.stringify(job)}\n${logged()}`);
      if (job.issued > 0) {
        const written = (await before.jobItems(jobId)).length;
        const again = await readJob(jobId);
        if (again.status === 'running' && written > again.issued) {
          await stack.crash();
          atKill = { issued: again.issued, written, ms: Date.now() - createdAt };
        }
      }
      if (!atKill) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    before.close();

    // npm start again, on the same data: it resumes the job before it prints its banner.
    const restarting = Date.now();
    stack = await start();
    const restartMs = Date.now() - restarting;
    expect(
      stack.lines.some((line) => line === `Resumed 1 running issuance job: ${jobId}`),
      stack.lines.join('\n'),
    ).toBe(true);

    let job = await readJob(jobId);
    for (const deadline = Date.now() + 60_000; job.status === 'running'; job = await readJob(jobId)) {
      if (Date.now() > deadline) throw new Error(`issuance job ${jobId} still running 60 s after the restart: ${JSON.stringify(job)}\n${logged()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const resumedMs = Date.now() - restarting - restartMs;
    expect(job).toMatchObject({ status: 'completed', issued: COUNT, count: COUNT });

    const after = database(stack.dynamodbEndpoint);
    try {
      const items = await after.jobItems(jobId);
      expect(items).toHaveLength(COUNT);
      expect(new Set(items.map((item) => item.slot))).toEqual(new Set(Array.from({ length: COUNT }, (_, slot) => slot)));
      const codes = await listed(generatorId);
      expect(codes).toHaveLength(COUNT);
      expect(new Set(codes).size).toBe(COUNT);
      expect([...codes].sort()).toEqual(items.map((item) => item.code as string).sort());
      const issuedEvents = (await after.events()).filter((event) => event.type === 'codes.issued');
      expect(issuedEvents).toHaveLength(1);
      expect(issuedEvents[0]!.resource_id).toBe(String(generatorId));
      expect(await after.counter(`codes-issued#${accountId}`, 'issued')).toBe(COUNT);
      expect(await after.counter(`issuance-jobs-running#${accountId}`, 'running')).toBe(0);
    } finally {
      after.close();
    }

    const rate = (codes: number, ms: number) => Math.round((codes * 1000) / ms);
    console.info(
      `issuance-job-kill: ${COUNT} codes in chunks of ${CHUNK}; npm start ready in ${(firstStartMs / 1000).toFixed(1)} s; ` +
        `killed ${(atKill.ms / 1000).toFixed(1)} s after the job's 202 with issued ${atKill.issued} and at least ${atKill.written} codes written ` +
        `(${rate(atKill.written, atKill.ms)} codes/s); npm start again ready in ${(restartMs / 1000).toFixed(1)} s; ` +
        `completed ${(resumedMs / 1000).toFixed(1)} s after that (${rate(COUNT - atKill.issued, resumedMs)} codes/s from the recorded chunks on); ` +
        `${((Date.now() - began) / 1000).toFixed(1)} s in all`,
    );
  });
});
