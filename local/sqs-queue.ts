import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { queues as queueSpecs, type QueueId } from '../functions/queues.ts';
import type { QueuedMessage } from '../functions/runtime/queue-client.ts';
import type { Worker } from '../functions/workers.ts';
import { runInvocation } from './invocation.ts';
import { lambdaContext, type WorkerHandler } from './invoke.ts';

/**
 * The local stand-in for one SQS queue of functions/queues.ts and the Lambda event source that
 * drives its worker (functions/workers.ts), with the settings both declare:
 * - standard: a message is handed over after its delay, in batches of up to the trigger's
 *   `batchSize` (what is visible when a worker is free; no batching window);
 * - FIFO: a group's messages in order, the next only when the one before is done, one message
 *   per invocation (a FIFO trigger with a larger batch size is refused: not emulated); a second
 *   message with the same deduplication id within 5 minutes is dropped;
 * - at most the trigger's `maxConcurrency` invocations at once;
 * - a message the worker reports in `batchItemFailures` (or every message of a batch whose
 *   invocation threw) comes back after the queue's `visibilityTimeoutSeconds` (a FIFO group waits
 *   for it), up to the trigger's `maxReceiveCount` receives; then it is logged as moved to the
 *   dead-letter queue (the message is dropped: there is no local dead-letter queue to redrive).
 * Messages live in memory; pending() and restore() carry them over a restart of `npm start`.
 */
export interface LocalQueue {
  send(messages: readonly QueuedMessage[]): Promise<void>;
}

interface LocalQueueOptions {
  /** Invocations at once; default the trigger's maxConcurrency. */
  readonly concurrency?: number;
  /**
   * When a failed message is handed over again, in milliseconds. Default: the queue's declared
   * visibilityTimeoutSeconds, as in AWS. Only the tests set it, to see a retry in a second.
   */
  readonly visibilityMs?: number;
  /**
   * Receives before the dead-letter queue, instead of the trigger's maxReceiveCount. Only the soak
   * sets it: with a visibility scaled down from minutes to seconds, the trigger's count would give
   * up on a message after seconds of outage instead of AWS's quarter of an hour.
   */
  readonly maxReceiveCount?: number;
  readonly log: (line: string) => void;
}

interface Waiting {
  readonly message: QueuedMessage;
  readonly id: string;
  receives: number;
  /** Epoch milliseconds when it was sent (or restored). */
  readonly queuedAt: number;
  /** FIFO: when the message, first of a free group, found every sender busy (unset: it has not). */
  poolBlockedSince?: number;
}

/** A message handed to the worker (FIFO), for tests: what held it up. */
export interface Dispatch {
  readonly message: QueuedMessage;
  /** When it was sent to the queue. */
  readonly queuedAt: number;
  /** When it was handed to the worker. */
  readonly at: number;
  /**
   * How long it was the first of its group, with the group free, while every sender was busy:
   * the time other groups (other lanes, origins, accounts) held it up. Waiting behind its own
   * group's earlier messages is not counted.
   */
  readonly poolWaitMs: number;
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
  /** Called for each FIFO message handed to the worker (tests: test/e2e/webhooks/isolation.test.ts). */
  onDispatch: ((dispatch: Dispatch) => void) | undefined;
  /**
   * Runs outside the invocation that sent the message: a route's deadline (an AsyncLocalStorage
   * of deadline.ts) must not follow its messages into the worker, as it could not in AWS.
   */
  private readonly outside = AsyncLocalStorage.snapshot();

  private readonly concurrency: number;
  private readonly visibilityMs: number;
  private readonly batchSize: number;
  private readonly maxReceiveCount: number;
  private readonly log: (line: string) => void;

  constructor(
    private readonly queueId: QueueId,
    private readonly worker: Worker,
    private readonly handler: WorkerHandler,
    options: LocalQueueOptions,
  ) {
    const trigger = worker.trigger;
    if (trigger.kind !== 'queue' || trigger.queue !== queueId) throw new Error(`${worker.name} does not consume queue ${queueId}`);
    if (queueSpecs[queueId].fifo && trigger.batchSize !== 1) {
      throw new Error(`${worker.name}: a FIFO batch of more than one message is not emulated locally (batchSize ${trigger.batchSize})`);
    }
    this.concurrency = options.concurrency ?? trigger.maxConcurrency;
    this.visibilityMs = options.visibilityMs ?? queueSpecs[queueId].visibilityTimeoutSeconds * 1000;
    this.batchSize = trigger.batchSize;
    this.maxReceiveCount = options.maxReceiveCount ?? trigger.maxReceiveCount;
    this.log = options.log;
  }

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
      this.later({ message, id: randomUUID(), receives: 0, queuedAt: Date.now() }, (message.delaySeconds ?? 0) * 1000);
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
        this.pumpSoon();
      }, delayMs),
    );
    this.timers.add(timer);
  }

  private pumpScheduled = false;

  /**
   * Pumps once the timers due now have all run: the messages that become visible together are
   * handed over in one batch (standard queue), as a poll of SQS would return them.
   */
  private pumpSoon(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
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
      this.later({ message: { ...message, delaySeconds }, id: randomUUID(), receives: 0, queuedAt: Date.now() }, (delaySeconds ?? 0) * 1000);
    }
  }

  /** Starts what may start: under the concurrency limit, and for FIFO one message per group. */
  private pump(): void {
    if (this.stopped) return;
    if (!this.fifo) {
      while (this.visible.length > 0 && this.inFlight < this.concurrency) this.dispatch(this.visible.splice(0, this.batchSize));
      return;
    }
    const now = Date.now();
    for (const [groupId, group] of this.groups) {
      if (group.busy) continue;
      const item = group.waiting[0];
      if (!item) {
        this.groups.delete(groupId);
        continue;
      }
      if (this.inFlight >= this.concurrency) {
        // Free to go but every sender is busy: held up by the other groups from now on.
        item.poolBlockedSince ??= now;
        continue;
      }
      group.busy = true;
      this.onDispatch?.({
        message: item.message,
        queuedAt: item.queuedAt,
        at: now,
        poolWaitMs: item.poolBlockedSince === undefined ? 0 : now - item.poolBlockedSince,
      });
      item.poolBlockedSince = undefined;
      this.dispatch([item], group);
    }
  }

  /** One invocation with a batch (FIFO: the first message of `group`). */
  private dispatch(items: Waiting[], group?: Group): void {
    this.inFlight++;
    for (const item of items) item.receives++;
    this.received += items.length;
    const run = (async () => {
      let failed = new Set<string>();
      try {
        const event: SQSEvent = {
          Records: items.map((item) => ({
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
          })),
        };
        const result = (await runInvocation(this.handler, event, lambdaContext(this.worker.name, this.worker.timeoutSeconds))) as SQSBatchResponse | undefined;
        failed = new Set((result?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      } catch (error) {
        failed = new Set(items.map((item) => item.id));
        this.log(JSON.stringify({ level: 'ERROR', message: 'local queue worker threw', worker: this.worker.name, error: String(error) }));
      } finally {
        this.inFlight--;
      }
      for (const item of items) {
        const itemFailed = failed.has(item.id);
        const retry = itemFailed && item.receives < this.maxReceiveCount;
        if (itemFailed && !retry) {
          this.log(
            JSON.stringify({
              level: 'ERROR',
              message: 'local queue: message moved to the dead-letter queue',
              worker: this.worker.name,
              body: item.message.body,
            }),
          );
        }
        if (!group) {
          if (retry) this.delay(item, this.visibilityMs);
        } else if (retry) {
          // The group waits for its first message to become visible again.
          this.after(this.visibilityMs, () => (group.busy = false));
        } else {
          group.waiting.shift();
          group.busy = false;
        }
      }
      this.pump();
    })();
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }
}
