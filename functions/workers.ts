import type { QueueId } from './queues.ts';
import type { TableId } from './tables.ts';
import type { TableAccess } from './routes.ts';

/**
 * The functions no route calls, declared beside the route table and read the same way: the CDK
 * stack builds each function with the grants of `tables` and `queues` and the event source its
 * `trigger` names (with the settings below), the local stack drives each with its stand-in
 * and the same settings (local/stream-reader.ts: DynamoDB Local's stream; local/sqs-queue.ts:
 * an in-process queue), and the tests walk it.
 */
type WorkerTrigger =
  | {
      /** The table's DynamoDB stream (NEW_IMAGE); only INSERTs pass the event source's filter. */
      readonly kind: 'stream';
      readonly table: TableId;
      readonly batchSize: number;
      /** Attempts of a failing batch (halved each time: bisectBatchOnError) before the failure queue. */
      readonly retryAttempts: number;
      /** Records older than this go to the failure queue instead of being processed. */
      readonly maxRecordAgeSeconds: number;
    }
  | {
      readonly kind: 'queue';
      readonly queue: QueueId;
      readonly batchSize: number;
      /** Most concurrent invocations the queue's event source starts. */
      readonly maxConcurrency: number;
      /** Receives of one message before its queue's dead-letter queue takes it. */
      readonly maxReceiveCount: number;
    };

export interface Worker {
  /** Names the function everywhere: log field, metric dimension, bundle metadata. */
  readonly name: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  readonly trigger: WorkerTrigger;
  readonly tables: Readonly<Partial<Record<TableId, TableAccess>>>;
  readonly queues?: readonly QueueId[];
  /** Lambda timeout. */
  readonly timeoutSeconds: number;
  readonly summary: string;
}

export const workers: readonly Worker[] = [
  {
    name: 'fanOutWebhookEvents',
    entry: 'functions/webhooks/fan-out-webhook-events.ts',
    trigger: { kind: 'stream', table: 'events', batchSize: 100, retryAttempts: 8, maxRecordAgeSeconds: 6 * 3600 },
    tables: { webhookEndpoints: ['Query'], webhookDeliveries: ['PutItem'] },
    queues: ['webhookDeliveries'],
    timeoutSeconds: 30,
    summary: 'Turns each new event into one delivery per enabled endpoint of its account that subscribes to its type',
  },
  {
    name: 'sendWebhookDeliveries',
    entry: 'functions/webhooks/send-webhook-deliveries.ts',
    // One message per invocation: a FIFO batch may mix groups, and a hanging receiver would hold
    // the healthy origins of its batch (their next messages wait until the batch ends). At most
    // 50 at once: an origin holds one per lane (4 while healthy, 1 while failing), so 49 failing
    // origins may hang side by side before a healthy one waits.
    trigger: { kind: 'queue', queue: 'webhookDeliveries', batchSize: 1, maxConcurrency: 50, maxReceiveCount: 5 },
    // The only function that reads the secrets; it claims and records attempts by conditional
    // updates and notes an endpoint's failures, success or disabling.
    tables: { webhookEndpoints: ['GetItem', 'UpdateItem'], webhookSecrets: ['GetItem'], webhookDeliveries: ['UpdateItem'] },
    // Back to its origin's lane (deliveries); a next attempt (retries).
    queues: ['webhookDeliveries', 'webhookRetries'],
    // An attempt waits at most 15 s for the receiver.
    timeoutSeconds: 30,
    summary: 'Signs and sends one due attempt of a delivery, and schedules the next after a failure',
  },
  {
    name: 'forwardDueWebhookDeliveries',
    entry: 'functions/webhooks/forward-due-webhook-deliveries.ts',
    trigger: { kind: 'queue', queue: 'webhookRetries', batchSize: 10, maxConcurrency: 10, maxReceiveCount: 5 },
    tables: {},
    queues: ['webhookDeliveries', 'webhookRetries'],
    timeoutSeconds: 30,
    summary: "Moves each attempt that has come due from the retries queue to its origin's lane of the deliveries queue",
  },
];
