import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { dirname, resolve } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { queueIds, queues as queueSpecs, type QueueId } from '../functions/queues.ts';
import { LOCAL_QUEUES, type LocalQueue, type QueuedMessage } from '../functions/webhooks/delivery-queue.ts';
import { workers, type Worker } from '../functions/workers.ts';
import { localClient } from './dynamodb.ts';

/**
 * The local stand-ins for what drives the workers of functions/workers.ts in AWS, running the
 * same handlers:
 * - a poller of DynamoDB Local's stream on the events table (Lambda's stream event source):
 *   batches of new records, only INSERTs (the event source's filter), retried from the first
 *   failed record (reportBatchItemFailures) a bounded number of times, then logged as sent to
 *   the failure destination. It starts at LATEST when the local stack starts: events committed
 *   while it was stopped are not delivered (nor sent again after a restart). Shards that appear
 *   later are read from TRIM_HORIZON; the stream is described again every second to find them.
 *   Bisection of a failing batch is not emulated: a batch is retried from its first failed record.
 * - an in-process queue standing in for each SQS queue (LocalSqsQueue below): the retries
 *   queue hands a message over after its delay; the deliveries queue is FIFO, one message of a
 *   group (an origin's lane) at a time, in order, with deduplication; both one message per
 *   invocation and at most the event source's maximum concurrency at once, so a hanging
 *   receiver holds its own lanes and nothing else, as in AWS. A message that fails is handed over
 *   again after `visibilityMs`, up to `maxReceiveCount` times (at least once, like SQS).
 *   Messages live in memory while the stack runs; npm start keeps what is waiting in a file when
 *   it stops and hands it back when it starts again (stateFile), so a restart loses no retry
 *   (a crash of the process does).
 */
type WorkerHandler = (event: unknown, context: Context) => Promise<unknown>;
export type WorkerLoader = (worker: Worker) => Promise<WorkerHandler>;

export const sourceWorkers: WorkerLoader = async (worker) =>
  (await import(pathToFileURL(resolve(worker.entry)).href)).handler as WorkerHandler;

export function bundledWorkers(bundles: Record<string, string>): WorkerLoader {
  return async (worker) => {
    const file = bundles[worker.name];
    if (!file) throw new Error(`No bundle for ${worker.name}: run cdk synth first`);
    return (await import(pathToFileURL(file).href)).handler as WorkerHandler;
  };
}

export interface LocalWebhookOptions {
  /** DynamoDB Local's endpoint. */
  readonly endpoint: string;
  /** Physical table names by table id (the stream's table is looked up here). */
  readonly tableNames: Record<string, string>;
  readonly loadWorker: WorkerLoader;
  readonly log?: (line: string) => void;
  readonly pollIntervalMs?: number;
  /** Concurrency of a queue worker by name, instead of its event source's maximum (a test of a small pool). */
  readonly concurrency?: Readonly<Record<string, number>>;
  readonly visibilityMs?: number;
  /**
   * Read the streams (default true). A test file that needs only the queue says false.
   */
  readonly streams?: boolean;
  /**
   * Hand on only the stream records of these accounts (default: every account). Test files
   * running side by side share the test tables: each reader of the events stream takes only the
   * events of the accounts its own file made, so no file's deliveries and retries end up in
   * another file's in-memory queue, which is dropped when that file ends.
   */
  readonly acceptsAccount?: (accountId: number) => boolean;
  /**
   * Where the queues' waiting messages are kept between runs (npm start: .local/webhook-queues.json):
   * written when the stack stops, handed back to the queues and removed when it starts. Without
   * it (the tests), what is waiting when the stack stops is dropped.
   */
  readonly stateFile?: string;
}

export interface LocalWebhooks {
  readonly queues: Record<QueueId, LocalSqsQueue>;
  close(): Promise<void>;
}

const lambdaContext = (name: string): Context =>
  ({
    awsRequestId: randomUUID(),
    functionName: `tillgate-local-${name}`,
    getRemainingTimeInMillis: () => 30_000,
  }) as Context;

export async function startLocalWebhooks(options: LocalWebhookOptions): Promise<LocalWebhooks> {
  const log = options.log ?? ((line) => process.stdout.write(`${line}\n`));
  const queues = {} as Record<QueueId, LocalSqsQueue>;
  const pollers: StreamPoller[] = [];
  for (const worker of workers) {
    if (worker.trigger.kind !== 'queue') continue;
    const handler = await options.loadWorker(worker);
    queues[worker.trigger.queue] = new LocalSqsQueue(worker.trigger.queue, worker, handler, {
      concurrency: options.concurrency?.[worker.name] ?? worker.trigger.maxConcurrency,
      visibilityMs: options.visibilityMs ?? 5000,
      log,
    });
  }
  for (const id of queueIds) if (!queues[id]) throw new Error(`No worker consumes queue ${id}`);
  (globalThis as Record<symbol, unknown>)[LOCAL_QUEUES] = queues;
  if (options.stateFile && existsSync(options.stateFile)) {
    const saved = JSON.parse(readFileSync(options.stateFile, 'utf8')) as Partial<Record<QueueId, PendingMessage[]>>;
    let restored = 0;
    for (const id of queueIds) {
      await queues[id].restore(saved[id] ?? []);
      restored += saved[id]?.length ?? 0;
    }
    rmSync(options.stateFile);
    log(JSON.stringify({ level: 'INFO', message: 'local webhook queues: messages of the last run restored', messages: restored, file: options.stateFile }));
  }

  for (const worker of workers) {
    if (worker.trigger.kind !== 'stream' || options.streams === false) continue;
    const handler = await options.loadWorker(worker);
    const poller = new StreamPoller(
      worker,
      handler,
      options.endpoint,
      options.tableNames[worker.trigger.table]!,
      options.pollIntervalMs ?? 100,
      log,
      options.acceptsAccount ?? (() => true),
    );
    await poller.start();
    pollers.push(poller);
  }

  return {
    queues,
    close: async () => {
      await Promise.all(pollers.map((poller) => poller.stop()));
      await Promise.all(Object.values(queues).map((queue) => queue.stop()));
      delete (globalThis as Record<symbol, unknown>)[LOCAL_QUEUES];
      if (options.stateFile) {
        const pending = Object.fromEntries(queueIds.map((id) => [id, queues[id].pending()]));
        const count = Object.values(pending).reduce((sum, list) => sum + list.length, 0);
        if (count > 0) {
          mkdirSync(dirname(options.stateFile), { recursive: true });
          writeFileSync(options.stateFile, JSON.stringify(pending));
          log(JSON.stringify({ level: 'INFO', message: 'local webhook queues: waiting messages kept for the next run', messages: count, file: options.stateFile }));
        }
      }
    },
  };
}

// ---------------------------------------------------------------- the stream

class StreamPoller {
  private readonly streams: DynamoDBStreamsClient;
  private readonly iterators = new Map<string, string>();
  private readonly known = new Set<string>();
  /** The last sequence number handed on, per shard: where to resume when an iterator is lost. */
  private readonly handled = new Map<string, bigint>();
  private streamArn = '';
  private stopped = false;
  private loop: Promise<void> | undefined;
  private lastDescribe = 0;

  constructor(
    private readonly worker: Worker,
    private readonly handler: WorkerHandler,
    private readonly endpoint: string,
    private readonly tableName: string,
    private readonly intervalMs: number,
    private readonly log: (line: string) => void,
    private readonly acceptsAccount: (accountId: number) => boolean,
  ) {
    this.streams = new DynamoDBStreamsClient({
      endpoint,
      region: process.env.AWS_REGION ?? 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 2,
    });
  }

  async start(): Promise<void> {
    const tables = localClient(this.endpoint);
    try {
      const { Table } = await tables.send(new DescribeTableCommand({ TableName: this.tableName }));
      if (!Table?.LatestStreamArn) throw new Error(`Table ${this.tableName} has no stream`);
      this.streamArn = Table.LatestStreamArn;
    } finally {
      tables.destroy();
    }
    // Open shards as they are now: from LATEST. Shards found later: from their start.
    await this.discover('LATEST');
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.streams.destroy();
  }

  private async discover(position: 'LATEST' | 'TRIM_HORIZON'): Promise<void> {
    this.lastDescribe = Date.now();
    let start: string | undefined;
    do {
      const { StreamDescription } = await this.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: start }));
      for (const shard of StreamDescription?.Shards ?? []) {
        const shardId = shard.ShardId!;
        if (this.known.has(shardId)) continue;
        this.known.add(shardId);
        // A shard closed before we started holds nothing new.
        if (position === 'LATEST' && shard.SequenceNumberRange?.EndingSequenceNumber) continue;
        const { ShardIterator } = await this.streams.send(
          new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
        );
        if (!ShardIterator) continue;
        this.iterators.set(shardId, ShardIterator);
        if (position === 'LATEST') await this.skipToEnd(shardId);
      }
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (Date.now() - this.lastDescribe > 1000) await this.discover('TRIM_HORIZON');
        let busy = false;
        for (const shardId of [...this.iterators.keys()]) busy = (await this.poll(shardId)) || busy;
        if (!busy) await sleep(this.intervalMs);
      } catch (error) {
        if (this.stopped) break;
        this.log(JSON.stringify({ level: 'WARN', message: 'local stream poller: retrying', worker: this.worker.name, error: String(error) }));
        await sleep(1000);
      }
    }
  }

  /**
   * Reads an open shard to its current end without handing anything on, and remembers the last
   * sequence number: "LATEST", as a position this poller can return to should DynamoDB Local
   * refuse the iterator later (see poll).
   */
  private async skipToEnd(shardId: string): Promise<void> {
    for (;;) {
      const page = await this.streams.send(new GetRecordsCommand({ ShardIterator: this.iterators.get(shardId)!, Limit: 1000 }));
      const last = page.Records?.at(-1)?.dynamodb?.SequenceNumber;
      if (last) this.handled.set(shardId, BigInt(last));
      if (!page.NextShardIterator) return void this.iterators.delete(shardId);
      this.iterators.set(shardId, page.NextShardIterator);
      if (!page.Records?.length) return;
    }
  }

  /** One GetRecords on a shard, handed to the worker; true when there were records. */
  private async poll(shardId: string): Promise<boolean> {
    const iterator = this.iterators.get(shardId)!;
    let page;
    try {
      page = await this.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: this.batchSize }));
    } catch (error) {
      // DynamoDB Local sometimes refuses an idle iterator after a transactional write
      // (TrimmedDataAccessException); an iterator also expires after 15 minutes. Read the shard
      // again from its start and skip what was already handed on.
      const name = (error as Error).name;
      if (name !== 'TrimmedDataAccessException' && name !== 'ExpiredIteratorException') throw error;
      const { ShardIterator } = await this.streams.send(
        new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' }),
      );
      if (!ShardIterator) this.iterators.delete(shardId);
      else this.iterators.set(shardId, ShardIterator);
      return true;
    }
    const records = (page.Records ?? []).filter((record) => this.isNew(shardId, record));
    if (records.length > 0) {
      await this.deliver(shardId, records);
      this.handled.set(shardId, BigInt(records.at(-1)!.dynamodb!.SequenceNumber!));
    }
    if (page.NextShardIterator) this.iterators.set(shardId, page.NextShardIterator);
    else this.iterators.delete(shardId); // closed and read to its end
    return (page.Records ?? []).length > 0;
  }

  /** Not handed on before (a shard read again from its start repeats what it had given). */
  private isNew(shardId: string, record: StreamRecord): boolean {
    const last = this.handled.get(shardId);
    return last === undefined || BigInt(record.dynamodb?.SequenceNumber ?? '0') > last;
  }

  private get batchSize(): number {
    return this.worker.trigger.kind === 'stream' ? this.worker.trigger.batchSize : 100;
  }

  /**
   * Hands a batch to the worker, as Lambda does with reportBatchItemFailures: a failed record
   * and those after it are retried (after a pause) up to retryAttempts times; then they are
   * logged as sent to the failure destination and the shard moves on.
   */
  private async deliver(shardId: string, records: StreamRecord[]): Promise<void> {
    const retryAttempts = this.worker.trigger.kind === 'stream' ? this.worker.trigger.retryAttempts : 0;
    let pending = records;
    for (let attempt = 0; pending.length > 0 && !this.stopped; attempt++) {
      // The event source's filter: only INSERTs reach the function.
      const inserts = pending.filter(
        (record) => record.eventName === 'INSERT' && this.acceptsAccount(Number(record.dynamodb?.NewImage?.account_id?.N)),
      );
      let failedAt: string | undefined;
      if (inserts.length > 0) {
        try {
          const result = (await this.handler({ Records: inserts.map(toLambdaRecord(this.streamArn)) } satisfies DynamoDBStreamEvent, lambdaContext(this.worker.name))) as
            | DynamoDBBatchResponse
            | undefined;
          failedAt = result?.batchItemFailures?.[0]?.itemIdentifier;
        } catch (error) {
          failedAt = inserts[0]!.dynamodb?.SequenceNumber;
          this.log(JSON.stringify({ level: 'ERROR', message: 'local stream worker threw', worker: this.worker.name, error: String(error) }));
        }
      }
      if (failedAt === undefined) return;
      const index = pending.findIndex((record) => record.dynamodb?.SequenceNumber === failedAt);
      pending = index < 0 ? pending : pending.slice(index);
      if (attempt >= retryAttempts) {
        this.log(
          JSON.stringify({
            level: 'ERROR',
            message: 'local stream: records sent to the failure destination after the last retry',
            worker: this.worker.name,
            shard: shardId,
            sequence_numbers: pending.map((record) => record.dynamodb?.SequenceNumber),
          }),
        );
        return;
      }
      await sleep(Math.min(2000, 100 * 2 ** attempt));
    }
  }
}

const toLambdaRecord =
  (streamArn: string) =>
  (record: StreamRecord): DynamoDBRecord => ({
    eventID: record.eventID,
    eventName: record.eventName as DynamoDBRecord['eventName'],
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    dynamodb: {
      ...(record.dynamodb as DynamoDBRecord['dynamodb']),
      ApproximateCreationDateTime: record.dynamodb?.ApproximateCreationDateTime
        ? Math.floor(new Date(record.dynamodb.ApproximateCreationDateTime).getTime() / 1000)
        : undefined,
    } as DynamoDBRecord['dynamodb'],
  });

// ---------------------------------------------------------------- the queues

interface Waiting {
  readonly message: QueuedMessage;
  readonly id: string;
  receives: number;
}

/** A FIFO group: its messages in order, and whether its first one is out (in flight, or invisible after a failure). */
interface Group {
  readonly waiting: Waiting[];
  busy: boolean;
}

export interface PendingMessage extends QueuedMessage {
  /** Epoch milliseconds. */
  readonly visibleAt: number;
}

/** SQS keeps a FIFO message's deduplication id this long. */
const DEDUPLICATION_MS = 5 * 60_000;

/**
 * One queue of queues.ts and the worker that consumes it, as Lambda's SQS event source runs it:
 * one message per invocation (a batch of one, which Lambda may always send), at most
 * `concurrency` invocations at once (the event source's maximum concurrency). Standard: a
 * message is handed over after its delay. FIFO: a group's messages in order, the next only when
 * the one before is done; a message that failed keeps its group waiting until it is handed over
 * again after `visibilityMs`; a second message with the same deduplication id within 5 minutes is
 * dropped. A failed message is handed over again up to `maxReceiveCount` times, then logged as
 * moved to the dead-letter queue (at least once, like SQS).
 */
export class LocalSqsQueue implements LocalQueue {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Standard: the messages waiting out a delay, and when each becomes visible. */
  private readonly delayed = new Map<Waiting, number>();
  /** Standard: the visible messages. */
  private readonly visible: Waiting[] = [];
  /** FIFO: groups by id, and deduplication ids seen with their expiry. */
  private readonly groups = new Map<string, Group>();
  private readonly deduplication = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private inFlight = 0;
  private stopped = false;
  /** Messages handed to the worker, copies included: for tests and the bench. */
  received = 0;
  /**
   * Runs outside the invocation that sent the message: a route's deadline (an AsyncLocalStorage
   * of deadline.ts) must not follow its messages into the worker, as it could not in AWS.
   */
  private readonly outside = AsyncLocalStorage.snapshot();

  constructor(
    private readonly queueId: QueueId,
    private readonly worker: Worker,
    private readonly handler: WorkerHandler,
    private readonly options: { concurrency: number; visibilityMs: number; log: (line: string) => void },
  ) {}

  private get fifo(): boolean {
    return queueSpecs[this.queueId].fifo;
  }

  async send(messages: readonly QueuedMessage[]): Promise<void> {
    for (const message of messages) {
      if (this.fifo) {
        if (!message.groupId || !message.deduplicationId || message.delaySeconds) {
          throw new Error(`${this.queueId} is FIFO: a message needs a group and a deduplication id, and takes no delay`);
        }
        const key = `${message.groupId}\u0000${message.deduplicationId}`;
        const now = Date.now();
        if ((this.deduplication.get(key) ?? 0) > now) continue;
        this.deduplication.set(key, now + DEDUPLICATION_MS);
        if (this.deduplication.size > 100_000) this.forgetExpired(now);
      } else if (message.groupId) {
        throw new Error(`${this.queueId} is a standard queue: a message takes no group`);
      }
      this.later({ message, id: randomUUID(), receives: 0 }, (message.delaySeconds ?? 0) * 1000);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.running]);
  }

  private forgetExpired(now: number): void {
    for (const [key, until] of this.deduplication) if (until <= now) this.deduplication.delete(key);
  }

  private after(delayMs: number, then: () => void): void {
    if (this.stopped) return;
    const timer = this.outside(() =>
      setTimeout(() => {
        this.timers.delete(timer);
        then();
        this.pump();
      }, delayMs),
    );
    this.timers.add(timer);
  }

  /** A new message, visible after its delay (FIFO: at the end of its group at once). */
  private later(item: Waiting, delayMs: number): void {
    if (!this.fifo) {
      this.delay(item, delayMs);
      return;
    }
    const groupId = item.message.groupId!;
    const group = this.groups.get(groupId) ?? { waiting: [], busy: false };
    this.groups.set(groupId, group);
    group.waiting.push(item);
    this.pump();
  }

  /** Standard: visible after `delayMs`; kept, not scheduled, once the queue is stopping (pending() hands it on). */
  private delay(item: Waiting, delayMs: number): void {
    this.delayed.set(item, Date.now() + delayMs);
    this.after(delayMs, () => {
      this.delayed.delete(item);
      this.visible.push(item);
    });
  }

  /**
   * What is still waiting once the queue has stopped, with when each message becomes visible:
   * `npm start` keeps it in a file and hands it to the next run (restore), so a restart does not
   * lose the retries it was waiting on.
   */
  pending(): PendingMessage[] {
    const now = Date.now();
    const waiting = this.fifo
      ? [...this.groups.values()].flatMap((group) => group.waiting.map((item) => ({ item, visibleAt: now })))
      : [...this.visible.map((item) => ({ item, visibleAt: now })), ...[...this.delayed].map(([item, visibleAt]) => ({ item, visibleAt }))];
    return waiting.map(({ item, visibleAt }) => ({ ...item.message, delaySeconds: undefined, visibleAt }));
  }

  /** Messages of an earlier run (pending()), each visible when it was due to be. */
  async restore(messages: readonly PendingMessage[]): Promise<void> {
    const now = Date.now();
    for (const { visibleAt, ...message } of messages) {
      const delaySeconds = this.fifo ? undefined : Math.max(0, Math.ceil((visibleAt - now) / 1000));
      this.later({ message: { ...message, delaySeconds }, id: randomUUID(), receives: 0 }, (delaySeconds ?? 0) * 1000);
    }
  }

  /** Starts what may start: under the concurrency limit, and for FIFO one message per group. */
  private pump(): void {
    if (this.stopped) return;
    if (!this.fifo) {
      while (this.visible.length > 0 && this.inFlight < this.options.concurrency) this.dispatch(this.visible.shift()!);
      return;
    }
    for (const [groupId, group] of this.groups) {
      if (this.inFlight >= this.options.concurrency) return;
      if (group.busy) continue;
      const item = group.waiting[0];
      if (!item) {
        this.groups.delete(groupId);
        continue;
      }
      group.busy = true;
      this.dispatch(item, group);
    }
  }

  private dispatch(item: Waiting, group?: Group): void {
    this.inFlight++;
    item.receives++;
    this.received++;
    const maxReceiveCount = this.worker.trigger.kind === 'queue' ? this.worker.trigger.maxReceiveCount : 1;
    const run = (async () => {
      let failed = false;
      try {
        const event: SQSEvent = {
          Records: [
            {
              messageId: item.id,
              receiptHandle: item.id,
              body: item.message.body,
              attributes: {
                ApproximateReceiveCount: String(item.receives),
                ...(group ? { MessageGroupId: item.message.groupId, MessageDeduplicationId: item.message.deduplicationId } : {}),
              } as SQSEvent['Records'][number]['attributes'],
              messageAttributes: {},
              md5OfBody: '',
              eventSource: 'aws:sqs',
              eventSourceARN: `arn:aws:sqs:local:000000000000:${this.queueId}${group ? '.fifo' : ''}`,
              awsRegion: 'local',
            },
          ],
        };
        const result = (await this.handler(event, lambdaContext(this.worker.name))) as SQSBatchResponse | undefined;
        failed = (result?.batchItemFailures ?? []).some((failure) => failure.itemIdentifier === item.id);
      } catch (error) {
        failed = true;
        this.options.log(JSON.stringify({ level: 'ERROR', message: 'local queue worker threw', worker: this.worker.name, error: String(error) }));
      } finally {
        this.inFlight--;
      }
      const retry = failed && item.receives < maxReceiveCount;
      if (failed && !retry) {
        this.options.log(JSON.stringify({ level: 'ERROR', message: 'local queue: message moved to the dead-letter queue', worker: this.worker.name, body: item.message.body }));
      }
      if (!group) {
        if (retry) this.delay(item, this.options.visibilityMs);
      } else if (retry) {
        // The group waits for its first message to become visible again.
        this.after(this.options.visibilityMs, () => (group.busy = false));
      } else {
        group.waiting.shift();
        group.busy = false;
      }
      this.pump();
    })();
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
