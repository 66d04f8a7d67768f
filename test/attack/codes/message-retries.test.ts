import { Readable } from 'node:stream';
import { vi } from 'vitest';

// Warnings and errors logged (the suites log nothing by default), before any logger is made.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'WARN';
});

import type { Context, SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findExport } from '../../../functions/data/exports.ts';
import { dynamodb } from '../../../functions/runtime/clients.ts';
import { messageWorker, QUICK_RETRY_DELAYS_SECONDS } from '../../../functions/runtime/message-worker.ts';
import type { QueueId } from '../../../functions/queues.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { useQueueWorkers } from '../../support/local-webhooks.ts';
import { captureLogs, type DynamoTransport } from '../support.ts';

/**
 * The quick retries every message worker shares (functions/runtime/message-worker.ts): the
 * issuance jobs, the exports and the issuance finalisation. A message whose handling failed sends
 * a copy of itself 2, 4, 8, then 16 s later, `retry` one higher, and is not reported; the fifth
 * failure in a row is reported, to come back after the queue's visibility timeout (2 to 30
 * minutes) and reach its dead-letter queue; an export's last receive marks it failed. Faults are
 * injected at the DynamoDB client's HTTP handler (a real database cannot fail on demand); the
 * queues are the local stack's, with a visibility of an hour, so that nothing here comes back but
 * the copies. Would catch: a worker that leaves a failed message to the visibility timeout (the
 * export below would not complete within the test), copies without end, a copy that loses the
 * message's fields, an export failed before its last receive or left running after it.
 */
const ctx = useLocalApi();
const workers = useQueueWorkers({ visibilityMs: 3_600_000 });
const captured: string[] = [];
beforeEach(() => captureLogs(captured));
afterEach(() => {
  vi.restoreAllMocks();
  captured.length = 0;
});

const transport = (dynamodb.config as unknown as { requestHandler: DynamoTransport }).requestHandler;
const refusal = () => ({
  response: {
    statusCode: 400,
    headers: { 'content-type': 'application/x-amz-json-1.0' },
    body: Readable.from([Buffer.from(JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message: 'injected' }))]),
  },
});
/** Every DynamoDB request whose body names this account fails (not retried: a ValidationException). */
function failRequestsOf(accountId: number, only?: string) {
  const passThrough = transport.handle.bind(transport);
  const failed = { count: 0 };
  vi.spyOn(transport, 'handle').mockImplementation(async (req, options) => {
    const raw = (req as { body?: string | Uint8Array }).body ?? '';
    const body = typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
    const target = String(req.headers['x-amz-target'] ?? '');
    if ((only && !target.endsWith(only)) || !body.includes(String(accountId))) return passThrough(req, options);
    failed.count++;
    return refusal();
  });
  return failed;
}

const request = (method: string, path: string, body?: unknown) =>
  call(ctx.api, 'core', method, path, { token: ctx.account.token, ...(body === undefined ? {} : { body }) });
async function generatorWithCodes(count: number): Promise<number> {
  const created = await request('POST', '/v1.0/codegen', { code_generator: { ...winterPromotion, generation_type: 'tillgate', code_length: 8 } });
  expect(created.status, created.text).toBe(201);
  const id = created.json.code_generator.id as number;
  expect((await request('POST', `/v1.0/codegen/${id}/codes`, { count })).status).toBe(201);
  return id;
}

const context = { awsRequestId: 'direct', functionName: 'direct', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const event = (body: object, receiveCount = 1): SQSEvent =>
  ({
    Records: [
      {
        messageId: `m-${receiveCount}-${JSON.stringify(body).length}`,
        body: JSON.stringify(body),
        attributes: { ApproximateReceiveCount: String(receiveCount) },
      },
    ],
  }) as unknown as SQSEvent;
type Handler = (event: SQSEvent, context: Context) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
const handlers = {
  issuanceJobs: (await import('../../../functions/codes/run-issuance-jobs.ts')).handler as unknown as Handler,
  exports: (await import('../../../functions/codes/write-exports.ts')).handler as unknown as Handler,
  issuanceFinalisation: (await import('../../../functions/codes/finalise-issuances.ts')).handler as unknown as Handler,
};
const copiesOf = (queue: QueueId, body: object) =>
  workers()
    .queues[queue].pending()
    .filter((message) => message.body === JSON.stringify(body));
const logged = (code: string) => captured.filter((line) => line.includes(`"error_code":"${code}"`)).map((line) => JSON.parse(line) as Record<string, unknown>);

/** Each worker's log codes: a copy sent, and the message left to its queue. */
const LOG_CODES = {
  issuanceJobs: { copy: 'issuance_job_retried', queue: 'issuance_job_stalled' },
  exports: { copy: 'export_retried', queue: 'export_not_written' },
  issuanceFinalisation: { copy: 'issuance_not_finalised', queue: 'issuance_not_finalised' },
} as const;

describe('every message worker retries a failed message within seconds', () => {
  it('an export whose first attempts fail is written by a copy of its message seconds later, not after the 30-minute visibility', async () => {
    const id = await generatorWithCodes(5);
    const received = workers().queues.exports.received;
    // The export's first two attempts (the message and its first copy) fail at the codes list's pages.
    const passThrough = transport.handle.bind(transport);
    const pages = { failed: 0 };
    const attempt = () => workers().queues.exports.received - received;
    vi.spyOn(transport, 'handle').mockImplementation(async (req, options) => {
      const raw = (req as { body?: string | Uint8Array }).body ?? '';
      const body = typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
      if (String(req.headers['x-amz-target']).endsWith('.Query') && body.includes(`"${ctx.account.accountId}#${id}`) && attempt() <= 2) {
        pages.failed++;
        return refusal();
      }
      return passThrough(req, options);
    });
    const started = Date.now();
    const created = await request('POST', `/v1.0/codegen/${id}/exports`, {});
    expect(created.status, created.text).toBe(202);
    let read = created;
    while (read.json.export.status === 'running' && Date.now() - started < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      read = await request('GET', `/v1.0/exports/${created.json.export.id}`);
    }
    expect(read.json.export, read.text).toMatchObject({ status: 'completed', rows: 5 });
    expect(pages.failed).toBeGreaterThanOrEqual(2);
    // The original and two copies (2 s, then 4 s after the failures): about 6 s, not 30 minutes.
    expect(attempt()).toBe(3);
    expect(logged('export_retried').map((line) => [line.retry, line.export_id])).toEqual([
      [0, created.json.export.id],
      [1, created.json.export.id],
    ]);
    expect(logged('export_not_written')).toEqual([]);
  });

  it.each([
    ['issuanceJobs', (accountId: number) => ({ kind: 'chunk', account_id: accountId, job_id: 987_654, chunk: 3 })],
    ['exports', (accountId: number) => ({ account_id: accountId, export_id: 987_654, sent_at: Date.now() })],
    ['issuanceFinalisation', (accountId: number) => ({ account_id: accountId, code_generator_id: 1, issuance_id: 987_654, settles_at: Date.now() + 60_000 })],
  ] as const)('%s: copies with retry 1 to 4, 2, 4, 8 and 16 s late, every field kept; the fifth failure is reported to the queue', async (queue, message) => {
    const failed = failRequestsOf(ctx.account.accountId);
    const original = message(ctx.account.accountId);
    for (const [retry, delaySeconds] of QUICK_RETRY_DELAYS_SECONDS.entries()) {
      const body = retry === 0 ? original : { ...original, retry };
      const sentAt = Date.now();
      expect(await handlers[queue](event(body), context)).toEqual({ batchItemFailures: [] });
      // The copy: the same fields, in the same order, and `retry` one higher, delayed.
      const copies = copiesOf(queue, { ...original, retry: retry + 1 });
      expect(copies).toHaveLength(1);
      expect(Math.round((copies[0]!.visibleAt - sentAt) / 1000)).toBe(delaySeconds);
    }
    const spent = { ...original, retry: QUICK_RETRY_DELAYS_SECONDS.length };
    const last = event(spent);
    expect(await handlers[queue](last, context)).toEqual({ batchItemFailures: [{ itemIdentifier: last.Records[0]!.messageId }] });
    expect(copiesOf(queue, { ...spent, retry: spent.retry + 1 })).toEqual([]);
    expect(failed.count).toBeGreaterThanOrEqual(5);
    // Logged in the worker's own words: a WARN per copy, an ERROR when the queue takes over.
    const codes = LOG_CODES[queue];
    expect(
      logged(codes.copy)
        .filter((line) => line.level === 'WARN')
        .map((line) => line.retry),
    ).toEqual([0, 1, 2, 3]);
    expect(
      logged(codes.queue)
        .filter((line) => line.level === 'ERROR')
        .map((line) => [line.retry, line.receive_count]),
    ).toEqual([[4, 1]]);
  });

  it('a body that is not a JSON object, and a copy the queue refuses, are reported at once', async () => {
    const notJson = event({});
    notJson.Records[0]!.body = 'not json';
    expect(await handlers.exports(notJson, context)).toEqual({ batchItemFailures: [{ itemIdentifier: notJson.Records[0]!.messageId }] });
    for (const body of ['5', 'null', '[1]', '"text"']) {
      const notObject = event({});
      notObject.Records[0]!.body = body;
      expect(await handlers.issuanceFinalisation(notObject, context), body).toEqual({
        batchItemFailures: [{ itemIdentifier: notObject.Records[0]!.messageId }],
      });
    }
    failRequestsOf(ctx.account.accountId);
    const url = process.env.EXPORTS_QUEUE_URL!;
    process.env.EXPORTS_QUEUE_URL = `${url}-no-such-queue`;
    try {
      const refused = event({ account_id: ctx.account.accountId, export_id: 987_655, sent_at: Date.now() });
      expect(await handlers.exports(refused, context)).toEqual({ batchItemFailures: [{ itemIdentifier: refused.Records[0]!.messageId }] });
    } finally {
      process.env.EXPORTS_QUEUE_URL = url;
    }
    expect(logged('queue_copy_not_sent')).toHaveLength(1);
  });

  it('an export whose quick retries are spent stays running until the last receive, which marks it failed', async () => {
    const id = await generatorWithCodes(3);
    // Every page of its codes fails from the start: the message the route sends fails and copies itself.
    failRequestsOf(ctx.account.accountId, '.Query');
    const created = await request('POST', `/v1.0/codegen/${id}/exports`, {});
    expect(created.status, created.text).toBe(202);
    const exportId = created.json.export.id as number;
    const spent = { account_id: ctx.account.accountId, export_id: exportId, sent_at: Date.now(), retry: QUICK_RETRY_DELAYS_SECONDS.length };
    const first = event(spent, 1);
    expect(await handlers.exports(first, context)).toEqual({ batchItemFailures: [{ itemIdentifier: first.Records[0]!.messageId }] });
    expect((await findExport(ctx.account.accountId, exportId))?.status).toBe('running');
    const last = event(spent, 3); // writeExports' maxReceiveCount (functions/workers.ts)
    expect(await handlers.exports(last, context)).toEqual({ batchItemFailures: [{ itemIdentifier: last.Records[0]!.messageId }] });
    const read = await request('GET', `/v1.0/exports/${exportId}`);
    expect(read.json.export, read.text).toMatchObject({ status: 'failed', error: 'The export could not be written; create a new one.' });
    expect(logged('export_failed')).toHaveLength(1);
  });

  it('refuses at load a message worker on a FIFO queue or on a stream', () => {
    expect(() =>
      messageWorker(
        'sendWebhookDeliveries',
        async () => undefined,
        () => undefined,
      ),
    ).toThrow('needs a standard queue; webhookDeliveries is FIFO');
    expect(() =>
      messageWorker(
        'rollUpCodeUses',
        async () => undefined,
        () => undefined,
      ),
    ).toThrow('No queue worker rollUpCodeUses');
  });
});
