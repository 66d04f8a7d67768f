import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { toLambdaRecord, type FailedBatchMessage } from '../functions/runtime/stream-batches.ts';
import type { Worker } from '../functions/workers.ts';
import { localClient } from './dynamodb.ts';
import { runInvocation } from './invocation.ts';
import { lambdaContext, sleep, type WorkerHandler } from './invoke.ts';
import type { LocalQueue } from './sqs-queue.ts';

/**
 * The local stand-in for a DynamoDB stream event source (functions/workers.ts, trigger `stream`):
 * a reader of DynamoDB Local's stream of the table that hands the worker batches of new records,
 * with the trigger's settings, as the stack's DynamoEventSource does in AWS:
 * - up to `batchSize` records a batch (one GetRecords of a shard), only those of the trigger's
 *   `eventNames` (the event source's filter);
 * - partial batch failures (reportBatchItemFailures): the failed record and those after it are
 *   retried, after a pause, up to `retryAttempts` times, then sent to the failure destination
 *   and the shard moves on; a batch whose invocation threw is retried whole;
 * - records older than `maxRecordAgeSeconds` when a batch is about to be handed over are sent to
 *   the failure destination instead;
 * - the failure destination: the local stand-in of the trigger's `failureQueue` (its worker reads
 *   the batches back from the stream and replays them, as in AWS), a message per batch in the
 *   shape Lambda sends; a trigger without one only logs them.
 * Not emulated: bisectBatchOnError (a failing batch is retried from its first failed record, not
 *   halved), parallel shards (they are read one after the other).
 * It starts at LATEST when the local stack starts: events committed while it was stopped are not
 * delivered (nor sent again after a restart). Shards that appear later are read from
 * TRIM_HORIZON; the stream is described again every second to find them.
 */
export class StreamPoller {
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
    /** The local stand-in of the trigger's failureQueue, which a worker drains; without it, given-up records are only logged. */
    private readonly failures?: LocalQueue,
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

  private passesFilter(record: StreamRecord): boolean {
    const eventNames: readonly string[] = this.worker.trigger.kind === 'stream' ? this.worker.trigger.eventNames : [];
    return record.eventName !== undefined && eventNames.includes(record.eventName);
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
      pending = await this.withinMaxAge(shardId, pending);
      // The event source's filter: only the trigger's event names reach the function.
      const passed = pending.filter((record) => this.passesFilter(record) && this.accepted(record));
      let failedAt: string | undefined;
      if (passed.length > 0) {
        try {
          const event = { Records: passed.map(toLambdaRecord(this.streamArn)) } satisfies DynamoDBStreamEvent;
          const result = (await runInvocation(this.handler, event, lambdaContext(this.worker.name, this.worker.timeoutSeconds))) as
            | DynamoDBBatchResponse
            | undefined;
          failedAt = result?.batchItemFailures?.[0]?.itemIdentifier;
        } catch (error) {
          failedAt = passed[0]!.dynamodb?.SequenceNumber;
          this.log(JSON.stringify({ level: 'ERROR', message: 'local stream worker threw', worker: this.worker.name, error: String(error) }));
        }
      }
      if (failedAt === undefined) return;
      const index = pending.findIndex((record) => record.dynamodb?.SequenceNumber === failedAt);
      pending = index < 0 ? pending : pending.slice(index);
      if (attempt >= retryAttempts) {
        await this.giveUp(shardId, pending, 'RetryAttemptsExhausted', attempt + 1);
        return;
      }
      await sleep(Math.min(2000, 100 * 2 ** attempt));
    }
  }

  /** The records young enough to be handed over (maxRecordAgeSeconds); the others go to the failure destination. */
  private async withinMaxAge(shardId: string, records: StreamRecord[]): Promise<StreamRecord[]> {
    const maxAgeSeconds = this.worker.trigger.kind === 'stream' ? this.worker.trigger.maxRecordAgeSeconds : Infinity;
    const oldest = Date.now() - maxAgeSeconds * 1000;
    const created = (record: StreamRecord) => record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? Date.now();
    const expired = records.filter((record) => created(record) < oldest);
    if (expired.length > 0) await this.giveUp(shardId, expired, 'RecordAgeExceeded', 0);
    return records.filter((record) => created(record) >= oldest);
  }

  /**
   * Records given up on, as Lambda's on-failure destination receives them: a message per run of
   * consecutive records naming the shard and the range of sequence numbers (FailedBatchMessage),
   * sent to the failure queue, where the trigger's replay worker reads them back from the
   * stream. Only the records this reader hands on (the trigger's event names, the accepted
   * accounts) are named: a range never spans another test file's records.
   */
  private async giveUp(shardId: string, records: StreamRecord[], condition: string, invocations: number): Promise<void> {
    const runs: StreamRecord[][] = [[]];
    for (const record of records) {
      if (this.passesFilter(record) && this.accepted(record)) runs.at(-1)!.push(record);
      else if (runs.at(-1)!.length > 0) runs.push([]);
    }
    const batches = runs.filter((run) => run.length > 0);
    this.log(
      JSON.stringify({
        level: 'ERROR',
        message: `local stream: records sent to the failure destination (${condition})`,
        worker: this.worker.name,
        shard: shardId,
        sequence_numbers: batches.flat().map((record) => record.dynamodb?.SequenceNumber),
        failure_queue: this.failures ? 'replayed by its worker' : 'none: logged only',
      }),
    );
    if (!this.failures || batches.length === 0) return;
    const when = (record: StreamRecord) => record.dynamodb?.ApproximateCreationDateTime?.toISOString();
    const messages = batches.map(
      (run): FailedBatchMessage => ({
        requestContext: { condition, approximateInvokeCount: invocations },
        timestamp: new Date().toISOString(),
        DDBStreamBatchInfo: {
          shardId,
          startSequenceNumber: run[0]!.dynamodb!.SequenceNumber!,
          endSequenceNumber: run.at(-1)!.dynamodb!.SequenceNumber!,
          ...(when(run[0]!) ? { approximateArrivalOfFirstRecord: when(run[0]!)! } : {}),
          ...(when(run.at(-1)!) ? { approximateArrivalOfLastRecord: when(run.at(-1)!)! } : {}),
          batchSize: run.length,
          streamArn: this.streamArn,
        },
      }),
    );
    await this.failures.send(messages.map((message) => ({ body: JSON.stringify(message) })));
  }

  private accepted(record: StreamRecord): boolean {
    return this.acceptsAccount(Number(record.dynamodb?.NewImage?.account_id?.N));
  }
}
