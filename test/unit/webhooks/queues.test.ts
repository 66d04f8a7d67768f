import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSqsQueue } from '../../../local/sqs-queue.ts';
import { startLocalWebhooks } from '../../../local/webhooks.ts';
import { startSqsEndpoint } from '../../../local/sqs-endpoint.ts';
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { workers } from '../../../functions/workers.ts';
import { deduplicationIdOf, messageGroupOf, type DeliveryMessage, type QueuedMessage } from '../../../functions/webhooks/delivery-queue.ts';
import {
  ACCOUNT_LANES,
  allocateLanes,
  BACKLOG_MS,
  FAST_ANSWER_MS,
  GROW_INTERVAL_MS,
  INITIAL_LANES,
  laneChangeAfter,
  laneOf,
  SLOW_ANSWER_MS,
  type LaneState,
} from '../../../functions/webhooks/lanes.ts';

/**
 * The two webhook queues: what the functions send (through the real SDK to a stand-in SQS
 * endpoint on 127.0.0.1 that records each request), the forwarder that moves retries when due,
 * and the local stack's stand-in for SQS, whose FIFO semantics the isolation of origins rests on.
 */
const message = (over: Partial<DeliveryMessage> = {}): DeliveryMessage => ({
  account_id: 7,
  endpoint_id: 3,
  event_id: 1001,
  generation: 1,
  attempts: 0,
  due_at: Date.now(),
  origin: 'https://hooks.example.com',
  lane: 1,
  ...over,
});

describe('message groups and lanes', () => {
  it('spreads an origin over its lanes by event (jump consistent hash): growing moves only the events of the new lanes, one lane holds every event', () => {
    const events = Array.from({ length: 2000 }, (_, i) => 1000 + i);
    for (const lanes of [1, 2, 3, 4, 7, 16, 40]) {
      const used = new Set(events.map((e) => laneOf(e, lanes)));
      expect(used, `${lanes} lanes`).toEqual(new Set(Array.from({ length: lanes }, (_, i) => i)));
    }
    expect(new Set(events.map((e) => laneOf(e, 1)))).toEqual(new Set([0]));
    // From 4 to 8 lanes about half the events change lane, and each one that does goes to a new lane (4–7).
    const moved = events.filter((e) => laneOf(e, 4) !== laneOf(e, 8));
    expect(moved.every((e) => laneOf(e, 8) >= 4)).toBe(true);
    expect(moved.length / events.length).toBeGreaterThan(0.4);
    expect(moved.length / events.length).toBeLessThan(0.6);
  });

  it("shares the account's lanes max-min fairly between its enabled endpoints; a failing one has one", () => {
    const endpoint = (id: number, lanes?: number, over: Partial<LaneState> = {}): LaneState => ({
      id,
      status: 'enabled',
      ...(lanes ? { lanes } : {}),
      ...over,
    });
    expect(allocateLanes([endpoint(1, 8), endpoint(2, 1)])).toEqual(
      new Map([
        [1, 8],
        [2, 1],
      ]),
    );
    expect(allocateLanes([endpoint(1)]).get(1)).toBe(Math.min(INITIAL_LANES, ACCOUNT_LANES)); // never written: the initial lanes
    expect(allocateLanes([endpoint(1, 8, { failing_since: '2026-11-26T00:00:00Z' })]).get(1)).toBe(1);
    expect(allocateLanes([endpoint(1, 999)]).get(1)).toBe(ACCOUNT_LANES);
    // Ten endpoints that all earned the most: ACCOUNT_LANES split evenly, never more in total.
    const ten = allocateLanes(Array.from({ length: 10 }, (_, i) => endpoint(i + 1, ACCOUNT_LANES)));
    expect([...ten.values()].reduce((a, b) => a + b)).toBeLessThanOrEqual(ACCOUNT_LANES);
    expect(Math.min(...ten.values())).toBeGreaterThanOrEqual(Math.floor(ACCOUNT_LANES / 10));
    // Nine small ones and a greedy one: the small ones get theirs, the greedy one the rest.
    const greedy = allocateLanes([...Array.from({ length: 9 }, (_, i) => endpoint(i + 1, 1)), endpoint(10, ACCOUNT_LANES)]);
    expect(greedy.get(10)).toBe(ACCOUNT_LANES - 9);
    expect(allocateLanes([endpoint(1, 8, { status: 'disabled' })]).size).toBe(0);
  });

  it('back to one lane after a slow 2xx; doubling after a fast one that waited, at most once per interval and up to the share', () => {
    const base = { id: 1, status: 'enabled', lanes: 4, lanes_at: 0 };
    const now = 1_000_000;
    const fast = { succeeded: true, durationMs: 5, waitedMs: BACKLOG_MS };
    expect(laneChangeAfter(base, 4, { ...fast, durationMs: SLOW_ANSWER_MS + 1 }, now)).toEqual({ kind: 'shrink' });
    expect(laneChangeAfter({ ...base, lanes: 1 }, 1, { ...fast, durationMs: SLOW_ANSWER_MS + 1 }, now)).toBeUndefined();
    expect(laneChangeAfter({ id: 1, status: 'enabled' }, INITIAL_LANES, { ...fast, durationMs: SLOW_ANSWER_MS + 1 }, now)).toEqual({ kind: 'shrink' });
    expect(laneChangeAfter({ id: 1, status: 'enabled' }, INITIAL_LANES, fast, now)).toEqual({ kind: 'grow', from: undefined, to: INITIAL_LANES * 2 });
    expect(laneChangeAfter(base, 4, fast, now)).toEqual({ kind: 'grow', from: 4, to: 8 });
    expect(laneChangeAfter(base, 4, { ...fast, waitedMs: BACKLOG_MS - 1 }, now)).toBeUndefined(); // no backlog
    expect(laneChangeAfter(base, 4, { ...fast, durationMs: FAST_ANSWER_MS + 1 }, now)).toBeUndefined(); // neither fast nor slow: stays
    expect(laneChangeAfter(base, 4, { ...fast, preparedMs: FAST_ANSWER_MS + 1 }, now)).toBeUndefined(); // the database is what is slow
    expect(laneChangeAfter({ ...base, lanes_at: now - GROW_INTERVAL_MS + 1 }, 4, fast, now)).toBeUndefined(); // grew just now
    expect(laneChangeAfter(base, 3, fast, now)).toBeUndefined(); // the account's share is smaller than what it earned
    expect(laneChangeAfter(base, 4, { ...fast, succeeded: false }, now)).toBeUndefined(); // noteFailure's job
    expect(laneChangeAfter({ ...base, lanes: ACCOUNT_LANES - 1 }, ACCOUNT_LANES - 1, fast, now)).toEqual({
      kind: 'grow',
      from: ACCOUNT_LANES - 1,
      to: ACCOUNT_LANES,
    });
  });

  it('names a group by a hash of the account and the origin, and the lane, within SQS limits (128 characters of the allowed set) whatever the origin', () => {
    const long = `https://${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.example.com:8443`;
    for (const origin of ['https://hooks.example.com', long, 'http://127.0.0.1:4000', 'https://xn--bcher-kva.example']) {
      const group = messageGroupOf({ account_id: 7, origin, lane: 39 });
      expect(group.length).toBeLessThanOrEqual(128);
      expect(group).toMatch(/^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]+$/);
      expect(group).not.toContain('example');
      expect(group.endsWith('-39')).toBe(true);
    }
    const group = (account_id: number, origin: string, lane: number) => messageGroupOf({ account_id, origin, lane });
    expect(group(7, 'https://a.example', 0)).not.toBe(group(7, 'https://b.example', 0));
    expect(group(7, 'https://a.example', 0)).not.toBe(group(7, 'https://a.example', 1));
    // Two accounts on one origin never share a lane.
    expect(group(7, 'https://a.example', 0)).not.toBe(group(8, 'https://a.example', 0));
    expect(group(7, 'https://a.example', 0)).toBe(group(7, 'https://a.example', 0));
    // One attempt of one delivery in one lane: a moved copy (another lane, or back in a lane it left) or the next attempt is not a duplicate.
    const id = deduplicationIdOf(message());
    expect(id.length).toBeLessThanOrEqual(128);
    expect(deduplicationIdOf(message({ lane: 0 }))).not.toBe(id);
    expect(deduplicationIdOf(message({ moves: 2 }))).not.toBe(id);
    expect(deduplicationIdOf(message({ attempts: 1 }))).not.toBe(id);
    expect(deduplicationIdOf(message())).toBe(id);
  });
});

describe('sending to SQS (the real SDK, a recording stand-in on 127.0.0.1)', () => {
  let server: Server;
  const requests: { target: string; body: any }[] = [];
  let refuse = false;
  let queue: typeof import('../../../functions/webhooks/delivery-queue.ts');
  let forwarder: typeof import('../../../functions/webhooks/forward-due-webhook-deliveries.ts');

  beforeAll(async () => {
    server = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      requests.push({ target: String(request.headers['x-amz-target']), body });
      const entries = body.Entries as { Id: string; MessageBody: string }[];
      response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
      response.end(
        JSON.stringify(
          refuse
            ? { Successful: [], Failed: entries.map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false })) }
            : {
                Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })),
                Failed: [],
              },
        ),
      );
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    vi.stubEnv('AWS_ENDPOINT_URL_SQS', base);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    vi.stubEnv('WEBHOOK_DELIVERIES_QUEUE_URL', `${base}/000000000000/deliveries.fifo`);
    vi.stubEnv('WEBHOOK_RETRIES_QUEUE_URL', `${base}/000000000000/retries`);
    vi.resetModules();
    queue = await import('../../../functions/webhooks/delivery-queue.ts');
    forwarder = await import('../../../functions/webhooks/forward-due-webhook-deliveries.ts');
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    vi.resetModules();
    await new Promise<void>((done) => server.close(() => done()));
  });

  it('sends due attempts to the FIFO queue with their group and deduplication id, in batches of 10, never with a delay', async () => {
    requests.length = 0;
    const due = Array.from({ length: 12 }, (_, i) => message({ event_id: 2000 + i, lane: laneOf(2000 + i, 4) }));
    await queue.enqueueDue(due);
    expect(requests.map((r) => [r.target, r.body.QueueUrl.endsWith('/deliveries.fifo'), r.body.Entries.length])).toEqual([
      ['AmazonSQS.SendMessageBatch', true, 10],
      ['AmazonSQS.SendMessageBatch', true, 2],
    ]);
    const entries = requests.flatMap((r) => r.body.Entries);
    expect(entries.map((e: any) => e.MessageGroupId)).toEqual(due.map(messageGroupOf));
    expect(entries.map((e: any) => e.MessageDeduplicationId)).toEqual(due.map(deduplicationIdOf));
    expect(entries.every((e: any) => e.DelaySeconds === undefined)).toBe(true);
    expect(entries.map((e: any) => JSON.parse(e.MessageBody))).toEqual(due);
  });

  it('delays waiting attempts on the standard retries queue by the rest of the wait, at most 900 s per hop', async () => {
    requests.length = 0;
    const now = Date.now();
    await queue.enqueueWaiting([message({ due_at: now + 5000 }), message({ due_at: now + 7_200_000 })], now);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.body.QueueUrl.endsWith('/retries')).toBe(true);
    expect(requests[0]!.body.Entries.map((e: any) => [e.DelaySeconds, e.MessageGroupId])).toEqual([
      [5, undefined],
      [900, undefined],
    ]);
  });

  it('the forwarder moves due retries to the FIFO queue and re-delays the others; what SQS refuses is reported for another try', async () => {
    requests.length = 0;
    const now = Date.now();
    const record = (id: string, m: DeliveryMessage) => ({ messageId: id, body: JSON.stringify(m) }) as SQSEvent['Records'][number];
    const event = {
      Records: [
        record('a', message({ due_at: now - 10 })),
        record('b', message({ due_at: now + 3_600_000, event_id: 5 })),
        record('c', message({ due_at: now + 500, event_id: 6 })),
      ],
    };
    expect(await forwarder.handler(event, { awsRequestId: 'r' } as Context)).toEqual({ batchItemFailures: [] });
    const byQueue = Object.fromEntries(requests.map((r) => [r.body.QueueUrl.split('/').at(-1), r.body.Entries]));
    expect(byQueue['deliveries.fifo'].map((e: any) => JSON.parse(e.MessageBody).event_id)).toEqual([1001, 6]);
    expect(byQueue.retries.map((e: any) => [JSON.parse(e.MessageBody).event_id, e.DelaySeconds])).toEqual([[5, 900]]);

    refuse = true;
    try {
      expect(await forwarder.handler(event)).toEqual({ batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'c' }, { itemIdentifier: 'b' }] });
    } finally {
      refuse = false;
    }
  });
});

describe("the local stack's stand-in for SQS", () => {
  const sender = workers.find((w) => w.name === 'sendWebhookDeliveries')!;
  const forwarder = workers.find((w) => w.name === 'forwardDueWebhookDeliveries')!;
  const fifo = (groupId: string, n: number, deduplicationId = `${groupId}-${n}`): QueuedMessage => ({
    body: JSON.stringify({ groupId, n }),
    groupId,
    deduplicationId,
  });
  const settle = () => new Promise((r) => setTimeout(r, 30));

  it('FIFO: one message of a group at a time, in order, groups side by side up to the concurrency; copies within 5 minutes dropped; a free group waiting for a sender is counted', async () => {
    const open = new Map<string, () => void>();
    const seen: string[] = [];
    let peak = 0;
    const handler = async (event: SQSEvent) => {
      const { groupId, n } = JSON.parse(event.Records[0]!.body);
      seen.push(`${groupId}${n}`);
      await new Promise<void>((done) => open.set(`${groupId}${n}`, done));
      open.delete(`${groupId}${n}`);
      return { batchItemFailures: [] };
    };
    const queue = new LocalSqsQueue('webhookDeliveries', sender, handler as never, { concurrency: 2, visibilityMs: 50, log: () => undefined });
    // What held each message up: the isolation tests' measure (test/support/webhooks/lanes.ts).
    const poolWaits = new Map<string, number>();
    queue.onDispatch = ({ message, poolWaitMs }) => {
      const { groupId, n } = JSON.parse(message.body);
      poolWaits.set(`${groupId}${n}`, poolWaitMs);
    };
    await queue.send([fifo('A', 1), fifo('A', 2), fifo('A', 1), fifo('B', 1), fifo('C', 1)]);
    await settle();
    peak = open.size;
    expect(seen).toEqual(['A1', 'B1']); // A's second waits for its first; C waits for a free sender
    open.get('A1')!();
    await settle();
    expect(seen).toEqual(['A1', 'B1', 'A2']);
    open.get('B1')!();
    await settle();
    expect(seen).toEqual(['A1', 'B1', 'A2', 'C1']);
    open.get('A2')!();
    open.get('C1')!();
    await settle();
    expect(seen).toHaveLength(4); // the copy of A1 was dropped
    expect(peak).toBe(2);
    expect(queue.received).toBe(4);
    // C1 was free to go from the start and waited two settles for B1's sender; A2 waited only
    // behind A1, its own group, which is not counted.
    expect(poolWaits.get('C1')).toBeGreaterThanOrEqual(40);
    expect([poolWaits.get('A1'), poolWaits.get('B1'), poolWaits.get('A2')]).toEqual([0, 0, 0]);
    await expect(queue.send([{ body: '{}', groupId: 'A', deduplicationId: 'x', delaySeconds: 5 }])).rejects.toThrow(/FIFO/);
    await queue.stop();
  });

  it('FIFO: a failed message keeps its group waiting until it is handed over again, then goes to the dead-letter log after maxReceiveCount', async () => {
    const seen: string[] = [];
    const logged: string[] = [];
    const handler = async (event: SQSEvent) => {
      const record = event.Records[0]!;
      const { groupId, n } = JSON.parse(record.body);
      seen.push(`${groupId}${n}`);
      return { batchItemFailures: groupId === 'A' && n === 1 ? [{ itemIdentifier: record.messageId }] : [] };
    };
    const queue = new LocalSqsQueue('webhookDeliveries', sender, handler as never, { concurrency: 4, visibilityMs: 20, log: (line) => void logged.push(line) });
    await queue.send([fifo('A', 1), fifo('A', 2), fifo('B', 1)]);
    const deadline = Date.now() + 3000;
    while (!seen.includes('A2') && Date.now() < deadline) await settle();
    const receives = sender.trigger.kind === 'queue' ? sender.trigger.maxReceiveCount : 0;
    expect(seen.filter((s) => s === 'A1')).toHaveLength(receives);
    expect(seen.indexOf('A2')).toBeGreaterThan(seen.lastIndexOf('A1'));
    expect(seen.indexOf('B1')).toBeLessThan(seen.lastIndexOf('A1'));
    expect(logged.some((line) => line.includes('dead-letter'))).toBe(true);
    await queue.stop();
  });

  it('standard: a message is handed over after its delay, with no group', async () => {
    const at: number[] = [];
    const queue = new LocalSqsQueue('webhookRetries', forwarder, (async () => void at.push(Date.now())) as never, {
      concurrency: 2,
      visibilityMs: 20,
      log: () => undefined,
    });
    const sent = Date.now();
    await queue.send([{ body: '{}', delaySeconds: 1 }]);
    await new Promise((r) => setTimeout(r, 1200));
    expect(at).toHaveLength(1);
    expect(at[0]! - sent).toBeGreaterThanOrEqual(990);
    await expect(queue.send([{ body: '{}', groupId: 'A' }])).rejects.toThrow(/standard/);
    await queue.stop();
  });

  it("standard: hands the worker batches of its trigger's batchSize, and a failed message of a batch comes back alone after the visibility time-out", async () => {
    const batches: string[][] = [];
    let open!: () => void;
    const gate = new Promise<void>((done) => (open = done));
    const handler = async (event: SQSEvent) => {
      batches.push(event.Records.map((r) => r.body));
      if (event.Records.some((r) => r.body === '"gate"')) await gate;
      const failed = event.Records.filter((r) => r.body === '"fail"' && r.attributes.ApproximateReceiveCount === '1');
      return { batchItemFailures: failed.map((r) => ({ itemIdentifier: r.messageId })) };
    };
    const queue = new LocalSqsQueue('webhookRetries', forwarder, handler as never, { concurrency: 1, visibilityMs: 50, log: () => undefined });
    const batchSize = forwarder.trigger.kind === 'queue' ? forwarder.trigger.batchSize : 0;
    expect(batchSize).toBeGreaterThan(1);
    // The one worker is busy while the others become visible: then they leave in batches.
    await queue.send([{ body: '"gate"' }]);
    while (batches.length === 0) await settle();
    const bodies = Array.from({ length: batchSize + 1 }, (_, i) => (i === 1 ? '"fail"' : String(i)));
    await queue.send(bodies.map((body) => ({ body })));
    await settle();
    open();
    const deadline = Date.now() + 2000;
    while (batches.flat().length < bodies.length + 2 && Date.now() < deadline) await settle();
    expect(batches.map((b) => b.length)).toEqual([1, batchSize, 1, 1]);
    expect(batches[3]).toEqual(['"fail"']);
    await queue.stop();
  });

  it("a failed message comes back after the queue's declared visibility timeout unless a test sets its own", async () => {
    const { queues } = await import('../../../functions/queues.ts');
    expect(queues.webhookDeliveries.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * sender.timeoutSeconds);
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      let receives = 0;
      const handler = async (event: SQSEvent) => {
        receives++;
        return { batchItemFailures: [{ itemIdentifier: event.Records[0]!.messageId }] };
      };
      const queue = new LocalSqsQueue('webhookDeliveries', sender, handler as never, { log: () => undefined });
      await queue.send([fifo('A', 1)]);
      await vi.advanceTimersByTimeAsync(queues.webhookDeliveries.visibilityTimeoutSeconds * 1000 - 1000);
      expect(receives).toBe(1);
      await vi.advanceTimersByTimeAsync(1000);
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      expect(receives).toBe(2);
      await queue.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('the local SQS endpoint takes what the SDK sends (SendMessageBatch, SendMessage) and hands it to the queue of its URL; a refused entry is reported Failed', async () => {
    const got: Record<string, QueuedMessage[]> = {
      webhookDeliveries: [],
      webhookRetries: [],
      issuanceFinalisation: [],
      issuanceJobs: [],
      fanOutFailures: [],
      exports: [],
    };
    const keep = (id: string) => ({
      send: async (messages: readonly QueuedMessage[]) => {
        if (messages.some((m) => m.body === 'refuse')) throw new Error('refused');
        got[id]!.push(...messages);
      },
    });
    const sqs = await startSqsEndpoint({
      webhookDeliveries: keep('webhookDeliveries'),
      webhookRetries: keep('webhookRetries'),
      issuanceFinalisation: keep('issuanceFinalisation'),
      issuanceJobs: keep('issuanceJobs'),
      exports: keep('exports'),
      fanOutFailures: keep('fanOutFailures'),
    });
    const client = new SQSClient({ endpoint: sqs.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      expect(sqs.environment.SQS_ENDPOINT).toBe(sqs.endpoint);
      expect(sqs.environment.WEBHOOK_DELIVERIES_QUEUE_URL).toMatch(/\/webhookDeliveries\.fifo$/);
      const batch = await client.send(
        new SendMessageBatchCommand({
          QueueUrl: sqs.queueUrls.webhookDeliveries,
          Entries: [
            { Id: 'a', MessageBody: 'one', MessageGroupId: 'g', MessageDeduplicationId: 'd1' },
            { Id: 'b', MessageBody: 'refuse', MessageGroupId: 'g', MessageDeduplicationId: 'd2' },
          ],
        }),
      );
      expect(batch.Successful?.map((e) => e.Id)).toEqual(['a']);
      expect(batch.Failed?.map((e) => [e.Id, e.SenderFault])).toEqual([['b', true]]);
      await client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrls.webhookRetries, MessageBody: 'two', DelaySeconds: 5 }));
      await client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrls.issuanceFinalisation, MessageBody: 'three', DelaySeconds: 30 }));
      expect(got).toEqual({
        webhookDeliveries: [{ body: 'one', groupId: 'g', deduplicationId: 'd1' }],
        webhookRetries: [{ body: 'two', delaySeconds: 5 }],
        issuanceFinalisation: [{ body: 'three', delaySeconds: 30 }],
        issuanceJobs: [],
        fanOutFailures: [],
        exports: [],
      });
      await expect(client.send(new SendMessageCommand({ QueueUrl: `${sqs.endpoint}/000000000000/other`, MessageBody: 'x' }))).rejects.toThrow(/No local queue/);
    } finally {
      client.destroy();
      await sqs.close();
    }
  });

  it('keeps what is waiting across a restart of npm start: delays keep their due time, FIFO groups their order', async () => {
    const seen: string[] = [];
    const slow = async (event: SQSEvent) => {
      const { groupId, n } = JSON.parse(event.Records[0]!.body);
      await new Promise((r) => setTimeout(r, 50));
      seen.push(`${groupId}${n}`);
      return { batchItemFailures: [] };
    };
    const options = { concurrency: 4, visibilityMs: 20, log: () => undefined };
    const first = new LocalSqsQueue('webhookDeliveries', sender, slow as never, options);
    await first.send([fifo('A', 1), fifo('A', 2), fifo('A', 3)]);
    await first.stop(); // A1 was in flight and completes; A2 and A3 wait
    expect(seen).toEqual(['A1']);
    const pending = first.pending();
    expect(pending.map((m) => JSON.parse(m.body).n)).toEqual([2, 3]);
    const second = new LocalSqsQueue('webhookDeliveries', sender, slow as never, options);
    await second.restore(pending);
    const deadline = Date.now() + 2000;
    while (seen.length < 3 && Date.now() < deadline) await settle();
    expect(seen).toEqual(['A1', 'A2', 'A3']);
    await second.stop();

    // Through startLocalWebhooks and its file, as npm start runs it.
    const stateFile = join(mkdtempSync(join(tmpdir(), 'tillgate-queues-')), 'webhook-queues.json');
    const start = () =>
      startLocalWebhooks({
        endpoint: 'http://127.0.0.1:9',
        tableNames: {},
        streams: false,
        stateFile,
        log: () => undefined,
        loadWorker: async () => (async () => ({ batchItemFailures: [] })) as never,
      });
    const dueIn = 600;
    const one = await start();
    await one.queues.webhookRetries.send([{ body: '{"retry":1}', delaySeconds: dueIn }]);
    const before = Date.now();
    await one.close();
    const saved = JSON.parse(readFileSync(stateFile, 'utf8'));
    expect(saved.webhookRetries).toHaveLength(1);
    expect(saved.webhookRetries[0].visibleAt - before).toBeGreaterThan((dueIn - 5) * 1000);
    const two = await start();
    expect(existsSync(stateFile)).toBe(false);
    await two.close();
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).webhookRetries.map((m: { body: string }) => m.body)).toEqual(['{"retry":1}']);
  });
});
