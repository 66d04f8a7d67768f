import type { SQSEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { send } from '../../support/client.ts';
import { newAccount } from '../../support/accounts.ts';
import { useLocalApi, type Around } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { codeItemsOf, eventsOf } from '../../support/records.ts';

// Chunks of 100 codes (1,000 in AWS), read by the route when it loads: a job of 450 codes is 5 chunks here.
vi.hoisted(() => {
  process.env.ISSUANCE_JOB_CHUNK_SIZE = '100';
});

/**
 * Issuance jobs end to end (PRODUCT.md, "Bulk"): POST /v1.0/codegen/{id}/issuance_jobs answers
 * 202 with Location and the job running, GET /v1.0/issuance_jobs/{id} shows `issued` growing
 * (never decreasing) and then `completed`; from then on every code reads as issued (list, lookup)
 * with issued_at = completed_at and one codes.issued event; before, none does. The worker
 * (runIssuanceJobs) runs on the local stack's in-process queue; where a test needs a job to stay
 * running it holds the worker at a gate. Every answer is checked against the OpenAPI document.
 * Would catch: a job whose codes show before it completes, or not all of them after; a wrong
 * issued_at; a missing or doubled event; a 4th running job accepted; another account's job
 * readable; an idempotent retry that starts a second job; bad input answered other than 400/422.
 * Budget: about 10 s on a 2-core machine.
 */
const ctx = useLocalApi();
let gate: Promise<void> = Promise.resolve();
let openGate = () => {};
const closeGate = () => {
  gate = new Promise((done) => (openGate = done));
};
const isJobMessage = (event: unknown) => (event as SQSEvent).Records?.[0]?.eventSourceARN?.endsWith(':issuanceJobs') === true;
const around: Around = (handler) => async (event, context) => {
  if (isJobMessage(event)) await gate;
  return handler(event, context);
};
let workers: LocalWebhooks;
beforeAll(async () => {
  workers = await startTestWebhooks({ around, streams: false });
});
afterAll(async () => {
  openGate();
  await workers?.close();
});
afterEach(() => openGate());

async function newGenerator(token = ctx.account.token, body: object = winterPromotion): Promise<number> {
  const created = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: body as typeof winterPromotion } }));
  expect(created.status, created.text).toBe(201);
  return created.json.code_generator.id;
}
const startJob = (id: number, count: number, headers: Record<string, string> = {}, token = ctx.account.token) =>
  call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/issuance_jobs`, { token, body: { count }, headers });
/**
 * A read as a client sends it: beside a running job a loaded 2-core machine's DynamoDB Local may
 * not answer in time, and the route says so (503 with Retry-After); the client tries again.
 */
async function patiently(read: () => ReturnType<typeof call>) {
  for (let attempt = 1; ; attempt++) {
    const response = await read();
    if (response.status !== 503 || attempt >= 8) return response;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
const readJob = (jobId: number, token = ctx.account.token) => patiently(() => call(ctx.api, 'core', 'GET', `/v1.0/issuance_jobs/${jobId}`, { token }));

/** Polls the job until it is no longer running (bounded), checking that `issued` never decreases. */
async function untilDone(jobId: number, seen: number[] = []): Promise<Record<string, any>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const read = await readJob(jobId);
    expect(read.status, read.text).toBe(200);
    const job = read.json.issuance_job;
    if (seen.length > 0) expect(job.issued).toBeGreaterThanOrEqual(seen.at(-1)!);
    seen.push(job.issued);
    if (job.status !== 'running') return job;
    if (Date.now() > deadline) throw new Error(`issuance job ${jobId} still running after 60 s: ${read.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function listAll(id: number): Promise<Record<string, any>[]> {
  const codes: Record<string, any>[] = [];
  let cursor: string | null = null;
  do {
    const page = await patiently(() =>
      call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { token: ctx.account.token }),
    );
    expect(page.status, page.text).toBe(200);
    codes.push(...page.json.codes);
    cursor = page.json.next_cursor;
  } while (cursor);
  return codes;
}

describe('POST /v1.0/codegen/{id}/issuance_jobs and GET /v1.0/issuance_jobs/{id}', () => {
  it('202 with Location and the job running; nothing reads as issued until it completes; then every code does, issued_at its completed_at, with one codes.issued event', {
    timeout: 90_000,
  }, async () => {
    const id = await newGenerator();
    closeGate();
    const started = await startJob(id, 450);
    expect(started.status, started.text).toBe(202);
    const job = started.json.issuance_job;
    expect(started.headers.get('location')).toBe(`/v1.0/issuance_jobs/${job.id}`);
    expect(job).toEqual({
      id: job.id,
      code_generator_id: id,
      count: 450,
      issued: 0,
      status: 'running',
      error: null,
      created_at: job.created_at,
      completed_at: null,
    });
    expect(job.created_at).toMatch(RFC3339_MILLIS_UTC);
    expect((await readJob(job.id)).json.issuance_job).toEqual(job);
    expect(await listAll(id)).toEqual([]);
    openGate();
    const seen: number[] = [];
    const done = await untilDone(job.id, seen);
    expect(done).toMatchObject({ status: 'completed', issued: 450, count: 450, error: null });
    expect(done.completed_at).toMatch(RFC3339_MILLIS_UTC);
    const listed = await listAll(id);
    expect(listed).toHaveLength(450);
    expect(new Set(listed.map((code) => code.code)).size).toBe(450);
    expect(listed.map((code) => code.code)).toEqual(listed.map((code) => code.code).sort());
    for (const code of listed) expect(code).toMatchObject({ code_generator_id: id, issued_at: done.completed_at, redeemed_at: null, times_redeemed: 0 });
    const one = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes/${listed[7]!.code.toLowerCase()}`, { token: ctx.account.token });
    expect(one.status, one.text).toBe(200);
    expect(one.json.code).toMatchObject({ code: listed[7]!.code, issued_at: done.completed_at });
    const unredeemed = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes?redeemed=false&limit=1000`, { token: ctx.account.token });
    expect(unredeemed.json.codes).toHaveLength(450);
    const issuedEvents = (await eventsOf(ctx.account.accountId)).filter((event) => event.type === 'codes.issued');
    expect(issuedEvents).toEqual([expect.objectContaining({ resource_id: String(id), created_at: done.completed_at })]);
    // The job's codes and its issuance record: nothing else, each code once.
    const items = (await codeItemsOf(ctx.account.accountId)).filter((item) => item.issuance_id === job.id);
    expect(items).toHaveLength(450);
    expect(new Set(items.map((item) => item.slot)).size).toBe(450);
    // The quota counts them.
    const redeemed = await call(ctx.api, 'pos', 'POST', '/v2.0/redeemed_codes', {
      token: ctx.account.token,
      body: { transaction: { site_id: 'S-0042', pos_transaction_id: 'T-1', codes: [listed[3]!.code], basket: { total: 5000, currency: 'EUR' } } },
    });
    expect(redeemed.status, redeemed.text).toBe(200);
    const after = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes/${listed[3]!.code}`, { token: ctx.account.token });
    expect(after.json.code).toMatchObject({ issued_at: done.completed_at, site_id: 'S-0042', pos_transaction_id: 'T-1', times_redeemed: 1 });
  });

  it('the 4th running job of an account answers 409; once one ends, another may start', async () => {
    const id = await newGenerator();
    closeGate();
    const jobs = [];
    for (let i = 0; i < 3; i++) {
      const started = await startJob(id, 10);
      expect(started.status, started.text).toBe(202);
      jobs.push(started.json.issuance_job.id as number);
    }
    const fourth = await startJob(id, 10);
    expect(fourth.status, fourth.text).toBe(409);
    expect(fourth.json.errors[0].message).toMatch(/3 issuance jobs running/);
    openGate();
    for (const jobId of jobs) expect((await untilDone(jobId)).status).toBe('completed');
    expect((await startJob(id, 10)).status).toBe(202);
  });

  it('Idempotency-Key: a repeat answers the first 202 and starts nothing; another body 409', async () => {
    const id = await newGenerator();
    const first = await startJob(id, 20, { 'Idempotency-Key': 'job-1' });
    expect(first.status, first.text).toBe(202);
    const again = await startJob(id, 20, { 'Idempotency-Key': 'job-1' });
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    const other = await startJob(id, 21, { 'Idempotency-Key': 'job-1' });
    expect(other.status).toBe(409);
    await untilDone(first.json.issuance_job.id);
    expect((await codeItemsOf(ctx.account.accountId)).filter((item) => typeof item.code === 'string')).toHaveLength(20);
  });

  it('refuses bad input (422 count, 400 body and ids, 413, 415, 401), an inactive generator (409), a count its space cannot hold (409), and answers 404 across accounts', async () => {
    const id = await newGenerator();
    for (const count of [0, 1_000_001, '5', 2.5, null]) {
      const refused = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/issuance_jobs`, { token: ctx.account.token, body: { count } });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.json.errors[0].field).toBe('count');
    }
    const unknownKey = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/issuance_jobs`, { token: ctx.account.token, body: { count: 5, codes: 1 } });
    expect(unknownKey.status).toBe(422);
    const malformed = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/issuance_jobs`, { token: ctx.account.token, body: '{"count":' });
    expect(malformed.status).toBe(400);
    expect((await call(ctx.api, 'core', 'POST', '/v1.0/codegen/abc/issuance_jobs', { token: ctx.account.token, body: { count: 5 } })).status).toBe(400);
    expect((await call(ctx.api, 'core', 'GET', '/v1.0/issuance_jobs/0', { token: ctx.account.token })).status).toBe(400);
    expect((await call(ctx.api, 'core', 'GET', '/v1.0/issuance_jobs/999999999', { token: ctx.account.token })).status).toBe(404);
    expect((await startJob(999_999_999, 5)).status).toBe(404);

    const small = await newGenerator(ctx.account.token, { ...winterPromotion, generation_type: 'numeric', code_length: 4, prefix: 'J' });
    const tooMany = await startJob(small, 10_001);
    expect(tooMany.status, tooMany.text).toBe(409);
    expect(tooMany.json.errors[0].message).toMatch(/can make 10000 distinct codes/);

    const inactive = await newGenerator(ctx.account.token, { ...winterPromotion, status: 'inactive' });
    const refused = await startJob(inactive, 5);
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].message).toMatch(/inactive/);

    const big = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/issuance_jobs`, {
      token: ctx.account.token,
      body: `{"count":1,"pad":"${'x'.repeat(17 * 1024)}"}`,
    });
    expect(big.status).toBe(413);
    const form = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/issuance_jobs`, {
      token: ctx.account.token,
      body: '{"count":1}',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect((await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/issuance_jobs`, { body: { count: 1 } })).status).toBe(401);
    expect((await call(ctx.api, 'core', 'GET', '/v1.0/issuance_jobs/1')).status).toBe(401);

    const started = await startJob(id, 5);
    expect(started.status).toBe(202);
    const other = await newAccount();
    expect((await readJob(started.json.issuance_job.id, other.token)).status).toBe(404);
    expect((await startJob(id, 5, {}, other.token)).status).toBe(404);
    await untilDone(started.json.issuance_job.id);
    expect((await codeItemsOf(other.accountId)).length).toBe(0);
  });
});
