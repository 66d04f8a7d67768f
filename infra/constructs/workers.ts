import path from 'node:path';
import { Duration, type RemovalPolicy, Tags, Validations } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { queueIds, queues, type QueueId, type QueueSpec } from '#functions/queues';
import type { TableId } from '#functions/tables';
import type { TableAccess } from '#functions/routes';
import { workers, type Worker } from '#functions/workers';
import type { Buckets } from './buckets.ts';
import type { DataTables } from './data-tables.ts';
import type { Keys } from './keys.ts';
import { FunctionWithLogGroup } from './function-with-log-group.ts';

export interface WorkersProps {
  readonly projectRoot: string;
  readonly tables: DataTables;
  readonly buckets: Buckets;
  readonly keys: Keys;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  readonly environment: Readonly<Record<string, string>>;
}

/** A queue where messages end when everything else failed: it has no dead-letter queue of its own, by design. */
function lastStop(queue: Queue, what: string): void {
  const reason = `This is ${what}: the last stop of messages that failed everywhere else, watched by an alarm; a dead-letter queue of it would only hide them one level further.`;
  Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason });
  Validations.of(queue).acknowledge({ id: 'Serverless-SQSRedrivePolicy', reason });
}

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/**
 * The queues of functions/queues.ts (each with a dead-letter queue) and the workers of
 * functions/workers.ts, each with the event source its trigger names:
 * - a stream: DynamoDB stream of the table, only the event names the trigger lists (a filter),
 *   bisected on error, partial batch failures, bounded retries and record age, and an SQS
 *   on-failure destination;
 * - a queue (standard or FIFO, as queues.ts declares): SQS with partial batch responses, its
 *   batch size and a concurrency ceiling.
 * Nothing here names a worker or a queue by hand.
 */
export class Workers extends Construct {
  readonly functions = new Map<string, FunctionWithLogGroup>();
  readonly queues = {} as Record<QueueId, Queue>;
  readonly deadLetterQueues = {} as Record<QueueId, Queue>;
  /** Stream workers' on-failure destinations, by worker name. */
  readonly failureQueues = new Map<string, Queue>();

  constructor(scope: Construct, id: string, props: WorkersProps) {
    super(scope, id);
    for (const queueId of queueIds) {
      const consumer = workers.find((w) => w.trigger.kind === 'queue' && w.trigger.queue === queueId);
      const maxReceiveCount = consumer?.trigger.kind === 'queue' ? consumer.trigger.maxReceiveCount : 5;
      const { fifo, visibilityTimeoutSeconds } = queues[queueId] as QueueSpec;
      // AWS's advice for a Lambda consumer: a visibility timeout of at least six times its timeout.
      if (consumer && visibilityTimeoutSeconds < 6 * consumer.timeoutSeconds) {
        throw new Error(`Queue ${queueId}: visibilityTimeoutSeconds ${visibilityTimeoutSeconds} is under six times ${consumer.name}'s timeout`);
      }
      // A claim's lease outlasts the consumer that took it, and the visibility outlasts the lease:
      // a message its sender failed on after the claim comes back to a lease that has ended.
      const lease = (queues[queueId] as QueueSpec).claimLeaseSeconds;
      if (consumer && lease !== undefined && !(consumer.timeoutSeconds < lease && lease < visibilityTimeoutSeconds)) {
        throw new Error(
          `Queue ${queueId}: claimLeaseSeconds ${lease} must lie between ${consumer.name}'s timeout (${consumer.timeoutSeconds} s) and the visibility time-out (${visibilityTimeoutSeconds} s)`,
        );
      }
      // A FIFO queue in high-throughput mode: the limits are per message group (an origin's
      // lane), and so is deduplication. Its dead-letter queue must be FIFO too.
      const fifoProps = fifo
        ? { fifo: true, fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID, deduplicationScope: DeduplicationScope.MESSAGE_GROUP }
        : {};
      const dlq = new Queue(this, `${pascal(queueId)}DeadLetterQueue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
        ...(fifo ? { fifo: true } : {}),
      });
      this.deadLetterQueues[queueId] = dlq;
      lastStop(dlq, `the dead-letter queue of ${queueId}`);
      this.queues[queueId] = new Queue(this, `${pascal(queueId)}Queue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(visibilityTimeoutSeconds),
        // A delayed message waits at most 900 s (a longer wait is a chain of hops), but a FIFO
        // group of an origin that hangs drains at one attempt per 15 s until the endpoint is
        // disabled (5 days of failures): SQS's longest retention, so no attempt expires unsent.
        retentionPeriod: Duration.days(14),
        deadLetterQueue: { queue: dlq, maxReceiveCount },
        ...fifoProps,
      });
    }

    for (const worker of workers) {
      const fn = new FunctionWithLogGroup(this, `${pascal(worker.name)}Function`, {
        operationId: worker.name,
        entry: path.join(props.projectRoot, worker.entry),
        description: `tillgate worker ${worker.name}: ${worker.summary}`.slice(0, 256),
        projectRoot: props.projectRoot,
        logRetention: props.logRetention,
        removalPolicy: props.removalPolicy,
        environment: props.environment,
        timeout: Duration.seconds(worker.timeoutSeconds),
        invokedBy: worker.trigger.kind,
      });
      for (const [tableId, access] of Object.entries(worker.tables) as [TableId, TableAccess][]) {
        fn.bindTable(props.tables.byId[tableId], access);
      }
      for (const queueId of worker.queues ?? []) fn.bindQueue(this.queues[queueId], queues[queueId].envVar);
      fn.bindKeys(props.keys, worker.keys ?? {});
      fn.bindBuckets(props.buckets.byId, worker.buckets ?? {});
      // A replay reads the batches its messages name back from the stream (their ARN is in the message).
      // Exactly the two reads it makes, on that stream only (not grantStreamRead, which adds ListStreams on every stream).
      for (const tableId of worker.streams ?? []) {
        const stream = props.tables.byId[tableId].table.tableStreamArn;
        if (!stream) throw new Error(`${worker.name} reads the stream of ${tableId}, which has none`);
        fn.executionRole.addToPrincipalPolicy(
          new PolicyStatement({ effect: Effect.ALLOW, actions: ['dynamodb:GetShardIterator', 'dynamodb:GetRecords'], resources: [stream] }),
        );
      }
      this.addEventSource(fn, worker, props.tables);
      Tags.of(fn).add('tillgate:worker', worker.name);
      this.functions.set(worker.name, fn);
    }
  }

  private lastStopFailureQueue(workerName: string): Queue {
    const failures = new Queue(this, `${pascal(workerName)}FailureQueue`, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    lastStop(failures, `the on-failure destination of ${workerName}'s stream event source`);
    return failures;
  }

  private addEventSource(fn: FunctionWithLogGroup, worker: Worker, tables: DataTables): void {
    const trigger = worker.trigger;
    if (trigger.kind === 'stream') {
      // A declared queue that a worker drains (with its own dead-letter queue), or a last stop.
      const failures = trigger.failureQueue ? this.queues[trigger.failureQueue] : this.lastStopFailureQueue(worker.name);
      this.failureQueues.set(worker.name, failures);
      fn.addEventSource(
        new DynamoEventSource(tables.byId[trigger.table].table, {
          startingPosition: StartingPosition.LATEST,
          batchSize: trigger.batchSize,
          bisectBatchOnError: true,
          reportBatchItemFailures: true,
          retryAttempts: trigger.retryAttempts,
          maxRecordAge: Duration.seconds(trigger.maxRecordAgeSeconds),
          onFailure: new SqsDlq(failures),
          // Only the records the worker reads (the local reader filters alike: local/stream-reader.ts).
          filters: [FilterCriteria.filter({ eventName: FilterRule.or(...trigger.eventNames) })],
        }),
      );
    } else {
      fn.addEventSource(
        new SqsEventSource(this.queues[trigger.queue], {
          batchSize: trigger.batchSize,
          reportBatchItemFailures: true,
          maxConcurrency: trigger.maxConcurrency,
        }),
      );
      Validations.of(fn).acknowledge({
        id: 'Serverless-LambdaEventSourceMappingDestination',
        reason:
          'An SQS event source mapping takes no on-failure destination: a message that keeps failing goes to the ' +
          "queue's own dead-letter queue (redrive policy, maxReceiveCount), which has an alarm.",
      });
    }
  }
}
