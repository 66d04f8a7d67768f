import type { BucketAccess } from './buckets.ts';
import type { QueueId } from './queues.ts';
import type { TableId } from './tables.ts';
import type { KeyAccess, TableAccess } from './routes.ts';

/** What a DynamoDB stream record says happened to its item. */
type StreamEventName = 'INSERT' | 'MODIFY' | 'REMOVE';

/**
 * The functions no route calls, declared beside the route table and read the same way: the CDK
 * stack builds each function with the grants of `tables` and `queues` and the event source its
 * `trigger` names (with the settings below), the local stack drives each with its stand-in
 * and the same settings (local/stream-reader.ts: DynamoDB Local's stream; local/sqs-queue.ts:
 * an in-process queue), and the tests walk it.
 */
type WorkerTrigger =
  | {
      /** The table's DynamoDB stream (NEW_IMAGE). */
      readonly kind: 'stream';
      readonly table: TableId;
      /** The records that reach the worker: the event source's filter in AWS, the local reader's alike. */
      readonly eventNames: readonly StreamEventName[];
      readonly batchSize: number;
      /** Attempts of a failing batch (halved each time: bisectBatchOnError) before the failure queue. */
      readonly retryAttempts: number;
      /** Records older than this go to the failure queue instead of being processed. */
      readonly maxRecordAgeSeconds: number;
      /**
       * The on-failure destination, when a worker drains it: a queue of queues.ts whose consumer
       * reads the given-up batch back from the stream and processes it again. Without it, a
       * queue of its own that only an alarm watches (the batch is repaired by hand).
       */
      readonly failureQueue?: QueueId;
      /**
       * What its stream's alarms tell on-call (infra/constructs/observability.ts): what reading
       * it late delays and where to look, and what a record given up on after every retry leaves
       * undone and how to repair it.
       */
      readonly onCall: { readonly late: string; readonly givenUp: string };
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
  /** KMS keys it uses, with the actions it takes (as a route row's `keys`). */
  readonly keys?: KeyAccess;
  /** S3 buckets (functions/buckets.ts) it uses, with exactly these actions on their objects. */
  readonly buckets?: BucketAccess;
  /** Tables whose stream it reads back itself (GetShardIterator, GetRecords): a replay of failed batches. */
  readonly streams?: readonly TableId[];
  /** Lambda timeout. */
  readonly timeoutSeconds: number;
  readonly summary: string;
}

export const workers: readonly Worker[] = [
  {
    name: 'fanOutWebhookEvents',
    entry: 'functions/webhooks/fan-out-webhook-events.ts',
    // New events only: an acknowledging DELETE or TTL's removal is not an event to deliver.
    trigger: {
      kind: 'stream',
      table: 'events',
      eventNames: ['INSERT'],
      batchSize: 100,
      retryAttempts: 8,
      maxRecordAgeSeconds: 6 * 3600,
      failureQueue: 'fanOutFailures',
      onCall: {
        late:
          'first attempts leave late. Look for its errors and throttles and for DynamoDB throttling on the deliveries table. ' +
          "One endpoint's attempts: saved query webhook-deliveries-of-one-endpoint.",
        givenUp:
          'their events are not fanned out to webhooks until replayFailedFanOuts reads the batches back from the stream and fans them out again: ' +
          'it has not managed for 15 minutes. Its log group has the error; the messages name the shard and sequence numbers. ' +
          "One endpoint's attempts: saved query webhook-deliveries-of-one-endpoint.",
      },
    },
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
    // 200 at once: an account's origins hold one sender per lane, together at most ACCOUNT_LANES
    // (40, functions/webhooks/lanes.ts), and a failing or slow origin one: four accounts may take
    // all their lanes at once (40 healthy origins that all start to hang) and 40 senders are left
    // for every other account's first attempts; failing or slow origins (one lane each, at most 10
    // an account) may hang 199 side by side before a healthy one waits.
    trigger: { kind: 'queue', queue: 'webhookDeliveries', batchSize: 1, maxConcurrency: 200, maxReceiveCount: 5 },
    // The only function that reads the secrets, and the only one that decrypts them; it claims
    // and records attempts by conditional updates, reads the account's endpoints (their lanes are
    // shared) and notes an endpoint's failures, success, lanes or disabling. It encrypts in place
    // a secret stored in text before encryption (UpdateItem on the secrets, GenerateDataKey:
    // data/webhook-secrets.ts, migrateLegacy).
    tables: { webhookEndpoints: ['Query', 'UpdateItem'], webhookSecrets: ['GetItem', 'UpdateItem'], webhookDeliveries: ['UpdateItem'] },
    keys: { webhookSecrets: ['Decrypt', 'GenerateDataKey'] },
    // Back to its origin's lane (deliveries); a next attempt (retries).
    queues: ['webhookDeliveries', 'webhookRetries'],
    // An attempt waits at most 15 s for the receiver.
    timeoutSeconds: 30,
    summary: 'Signs and sends one due attempt of a delivery, and schedules the next after a failure',
  },
  {
    name: 'replayFailedFanOuts',
    entry: 'functions/webhooks/replay-failed-fan-outs.ts',
    // The fan-out's on-failure queue: one given-up batch (a shard's range of sequence numbers) per
    // message, read back from the events stream and fanned out again (idempotent: a delivery is
    // put only if absent, and a second copy of a message sends nothing). A batch that fails again
    // comes back after the queue's visibility (6 min), ten times, then goes to the dead-letter
    // queue (alarm): about an hour, well inside the stream's 24 h.
    trigger: { kind: 'queue', queue: 'fanOutFailures', batchSize: 1, maxConcurrency: 2, maxReceiveCount: 10 },
    tables: { webhookEndpoints: ['Query'], webhookDeliveries: ['PutItem'] },
    queues: ['webhookDeliveries'],
    streams: ['events'],
    // Up to 100 records read back and fanned out.
    timeoutSeconds: 60,
    summary: "Replays the fan-out's batches given up on: reads them back from the events stream and fans them out again",
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
  {
    name: 'finaliseIssuances',
    entry: 'functions/codes/finalise-issuances.ts',
    // A message per issuance of more than one transaction, delayed so that the request's own
    // finalisation has come and gone: usually one GetItem that finds nothing left to do.
    trigger: { kind: 'queue', queue: 'issuanceFinalisation', batchSize: 10, maxConcurrency: 5, maxReceiveCount: 5 },
    // The issuance record (GetItem) and its codes: each pending code finalised by an UpdateItem
    // returning it (ALL_NEW, and ALL_OLD on a failed condition), its redeemed state then settled
    // as the uses rollup settles it (a consistent GetItem after a conflict); the record's list
    // of pending codes removed.
    tables: { codes: ['GetItem', 'UpdateItem'] },
    // Back to its own queue: a message that came before its issuance could have completed.
    queues: ['issuanceFinalisation'],
    // At most 902 codes, 10 UpdateItems at a time: about a second in AWS.
    timeoutSeconds: 20,
    summary: "Finalises the pending codes an issuance's request left pending (its finalisation cut off), so that they enter the generator's list",
  },
  {
    name: 'runIssuanceJobs',
    entry: 'functions/codes/run-issuance-jobs.ts',
    // One message (a start, or a chunk of 1,000 codes) per invocation, at most 5 at once: about
    // 80 conditional puts in flight, so that tills and the other routes keep their room on the
    // codes table and in the account's Lambda concurrency while a job runs.
    trigger: { kind: 'queue', queue: 'issuanceJobs', batchSize: 1, maxConcurrency: 5, maxReceiveCount: 5 },
    // The job and the account's running jobs (GetItem, UpdateItem); its codes, one conditional
    // PutItem each, the code as it is returned on a failed condition (GetItem); at completion the
    // issuance record (PutItem) and the event (PutItem, returned on a failed condition), and id
    // blocks; at failure the quota given back.
    tables: { counters: ['GetItem', 'UpdateItem'], codes: ['PutItem', 'GetItem'], codeGenerators: ['GetItem'], events: ['PutItem', 'GetItem'] },
    // Its chunks' messages, and a start that came before its job was written.
    queues: ['issuanceJobs'],
    // A chunk of 1,000 codes, 16 puts in flight: about a second in AWS.
    timeoutSeconds: 60,
    summary: "Writes an issuance job's codes chunk by chunk, records its progress, and completes or fails it",
  },
  {
    name: 'rollUpPromotionUses',
    entry: 'functions/codes/roll-up-promotion-uses.ts',
    // A shard's first use (INSERT) and every later one or void (MODIFY); shards are never removed.
    // Up to 1000 records a batch: one UpdateItem per generator in it, whatever its records.
    trigger: {
      kind: 'stream',
      table: 'promotionShards',
      eventNames: ['INSERT', 'MODIFY'],
      batchSize: 1000,
      retryAttempts: 8,
      maxRecordAgeSeconds: 24 * 3600,
      onCall: {
        late: "code generators' times_redeemed lags the redemptions by as much. Look for its errors and throttles and for DynamoDB throttling on the code generators table.",
        givenUp:
          "some generators' times_redeemed misses the uses of those records until their shards change again. The function log names account and generator; " +
          'the messages name the shard and sequence numbers (docs/operations.md, "Stream records given up on").',
      },
    },
    tables: { codeGenerators: ['UpdateItem'] },
    timeoutSeconds: 30,
    summary: "Copies the uses each promotion shard holds onto its code generator (shard_uses), whose sum is the generator's times_redeemed",
  },
  {
    // A worker of its own, not a second trigger of the one above: a row has one trigger, each
    // function gets the grants of its own table only, and a failing batch of one stream holds
    // back nothing of the other.
    name: 'rollUpCodeUses',
    entry: 'functions/codes/roll-up-code-uses.ts',
    trigger: {
      kind: 'stream',
      table: 'codeShards',
      eventNames: ['INSERT', 'MODIFY'],
      batchSize: 1000,
      retryAttempts: 8,
      maxRecordAgeSeconds: 24 * 3600,
      onCall: {
        late: "multi-use codes' times_redeemed and redeemed state (the codes list) lag the redemptions by as much. Look for its errors and throttles and for DynamoDB throttling on the codes table.",
        givenUp:
          "some codes' times_redeemed and redeemed state miss the uses of those records until their shards change again. The function log names account and generator; " +
          'the messages name the shard and sequence numbers (docs/operations.md, "Stream records given up on").',
      },
    },
    // UpdateItem returning the code (ReturnValues ALL_NEW, and ALL_OLD on a failed condition) and
    // a consistent read: the code's redeemed state follows its uses (data/codes.ts).
    tables: { codes: ['UpdateItem', 'GetItem'] },
    timeoutSeconds: 30,
    summary: "Copies the uses each shard of a multi-use code holds onto the code (shard_uses), and keeps the code's redeemed state (by_redeemed) in step",
  },
  {
    name: 'writeExports',
    entry: 'functions/codes/write-exports.ts',
    // One export per invocation: a million codes take about a minute and a half in AWS
    // (docs/api.md, "Exports"). At most 5 at once, so that exports leave the codes table's
    // indexes to the tills and the list route.
    trigger: { kind: 'queue', queue: 'exports', batchSize: 1, maxConcurrency: 5, maxReceiveCount: 3 },
    // The export (GetItem; completed or failed by one conditional UpdateItem, in a transaction with
    // its event), the generator (its current max_redemptions_per_code), the codes list's index
    // pages (Query), id blocks for the event (counters).
    tables: {
      exports: ['GetItem', 'UpdateItem'],
      codeGenerators: ['GetItem'],
      codes: ['Query'],
      events: ['PutItem', 'GetItem'],
      counters: ['UpdateItem'],
    },
    // A multipart upload (PutObject for each step) and its abort when writing fails midway.
    buckets: { exports: ['s3:PutObject', 's3:AbortMultipartUpload'] },
    // A message that comes before its export's record is written is sent again, delayed.
    queues: ['exports'],
    timeoutSeconds: 300,
    summary: "Writes an export: pages the generator's codes list into a CSV streamed to S3, then completes the export with its export.completed event",
  },
];
