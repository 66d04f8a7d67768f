import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { dirname, resolve } from 'node:path';
import { queueIds, type QueueId } from '../functions/queues.ts';
import { workers, type Worker } from '../functions/workers.ts';
import type { WorkerHandler } from './invoke.ts';
import { startSqsEndpoint } from './sqs-endpoint.ts';
import { LocalSqsQueue, type PendingMessage } from './sqs-queue.ts';
import { StreamPoller } from './stream-reader.ts';

/**
 * The local stand-ins for what drives the workers of functions/workers.ts in AWS, wired to the
 * same handlers:
 * - stream-reader.ts: DynamoDB Local's stream of a table, as Lambda's stream event source;
 * - sqs-queue.ts: an in-process queue for each SQS queue of functions/queues.ts and its event
 *   source, behind sqs-endpoint.ts, the SQS endpoint on 127.0.0.1 the functions send to with the
 *   SDK (SQS_ENDPOINT and the queue URLs are set in the environment here, at the edge: no
 *   function knows it runs locally).
 * Their timings and batch sizes are those functions/queues.ts and functions/workers.ts declare,
 * which the CDK stack reads too. Messages live in memory while the stack runs; npm start keeps
 * what is waiting in a file when it stops and hands it back when it starts again (stateFile), so
 * a restart loses no retry (a crash of the process does). What is not emulated:
 * docs/webhooks.md, "Locally".
 */
export type WorkerLoader = (worker: Worker) => Promise<WorkerHandler>;

export const sourceWorkers: WorkerLoader = async (worker) => (await import(pathToFileURL(resolve(worker.entry)).href)).handler as WorkerHandler;

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
  /**
   * When a failed message comes back, in milliseconds, instead of the queue's declared
   * visibilityTimeoutSeconds (180 s, as in AWS): set only by the tests, to see a retry in a second.
   */
  readonly visibilityMs?: number;
  /** Receives before a queue's dead-letter queue, instead of each trigger's maxReceiveCount: set only by the soak (sqs-queue.ts). */
  readonly maxReceiveCount?: number;
  /** Port of the local SQS endpoint (default: a free one). */
  readonly sqsPort?: number;
  /**
   * Read the streams (default true). A test file that needs only the queue says false.
   */
  readonly streams?: boolean;
  /**
   * Hand on only the stream records of these accounts (default: every account). Test files
   * running side by side share the test tables: each reader of a stream takes only the records
   * of the accounts its own file made, so no file's deliveries and retries end up in another
   * file's in-memory queue, which is dropped when that file ends (and no file's rollup writes
   * another's generators).
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
  /** The SQS endpoint the functions send to (SQS_ENDPOINT). */
  readonly sqsEndpoint: string;
  close(): Promise<void>;
}

export async function startLocalWebhooks(options: LocalWebhookOptions): Promise<LocalWebhooks> {
  const log = options.log ?? ((line) => process.stdout.write(`${line}\n`));
  const queues = {} as Record<QueueId, LocalSqsQueue>;
  const pollers: StreamPoller[] = [];
  for (const worker of workers) {
    if (worker.trigger.kind !== 'queue') continue;
    const handler = await options.loadWorker(worker);
    queues[worker.trigger.queue] = new LocalSqsQueue(worker.trigger.queue, worker, handler, {
      ...(options.concurrency?.[worker.name] !== undefined ? { concurrency: options.concurrency[worker.name] } : {}),
      ...(options.visibilityMs !== undefined ? { visibilityMs: options.visibilityMs } : {}),
      ...(options.maxReceiveCount !== undefined ? { maxReceiveCount: options.maxReceiveCount } : {}),
      log,
    });
  }
  for (const id of queueIds) if (!queues[id]) throw new Error(`No worker consumes queue ${id}`);
  const sqs = await startSqsEndpoint(queues, options.sqsPort !== undefined ? { port: options.sqsPort } : {});
  // The functions of this process (routes and workers) find the queues where they would in AWS.
  const before = Object.fromEntries(Object.keys(sqs.environment).map((name) => [name, process.env[name]]));
  Object.assign(process.env, sqs.environment);
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
      worker.trigger.failureQueue ? queues[worker.trigger.failureQueue] : undefined,
    );
    await poller.start();
    pollers.push(poller);
  }

  return {
    queues,
    sqsEndpoint: sqs.endpoint,
    close: async () => {
      await Promise.all(pollers.map((poller) => poller.stop()));
      // The queues first: what their running invocations send still reaches them (and is kept).
      await Promise.all(Object.values(queues).map((queue) => queue.stop()));
      await sqs.close();
      for (const [name, value] of Object.entries(before)) {
        if (process.env[name] !== sqs.environment[name]) continue; // someone else's since
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      if (options.stateFile) {
        const pending = Object.fromEntries(queueIds.map((id) => [id, queues[id].pending()]));
        const count = Object.values(pending).reduce((sum, list) => sum + list.length, 0);
        if (count > 0) {
          mkdirSync(dirname(options.stateFile), { recursive: true });
          writeFileSync(options.stateFile, JSON.stringify(pending));
          log(
            JSON.stringify({
              level: 'INFO',
              message: 'local webhook queues: waiting messages kept for the next run',
              messages: count,
              file: options.stateFile,
            }),
          );
        }
      }
    },
  };
}
