/**
 * Every SQS queue the functions send to, declared once (as tables.ts declares the tables). The
 * CDK stack creates them, grants `sqs:SendMessage` to the routes and workers that name them and
 * hands them the URL in the environment variable named here; the local stack stands an
 * in-process queue in for each (local/sqs-queue.ts), FIFO or standard and with the visibility
 * timeout declared here.
 */
export interface QueueSpec {
  /** Environment variable through which a function learns the queue's URL. */
  readonly envVar: string;
  /**
   * A FIFO queue: each message names a group, and a group's next message is handed out only
   * when the one before it is done, so one consumer at most works on a group at a time. No
   * per-message delay.
   */
  readonly fifo: boolean;
  /**
   * How long a received message stays invisible: a message its worker failed comes back after
   * this, in AWS and locally alike. AWS's advice for a Lambda consumer, which the stack checks:
   * at least six times the consumer's timeout (functions/workers.ts).
   */
  readonly visibilityTimeoutSeconds: number;
  /**
   * A queue whose consumer claims a message's work in the database before doing it (a lease, so
   * that two copies of a message never do it side by side): how long the claim holds. The stack
   * checks that it outlasts the consumer's timeout (a sender still running when its lease ends
   * could send beside the next) and that the visibility time-out outlasts it (a message its
   * consumer failed after the claim comes back once the lease has ended). A copy that meets a live
   * lease anyway (a test's short visibility, a duplicate) is sent back delayed until the lease ends,
   * never acknowledged unsent: the order of the two is not what keeps a delivery.
   */
  readonly claimLeaseSeconds?: number;
  readonly description: string;
  /**
   * What its alarms tell on-call (infra/constructs/observability.ts): after "its worker failed on
   * them N times", what kind of fault that is, what a message in its dead-letter queue leaves
   * undone and how to repair it; and, for a queue whose messages must not wait, the age of its
   * oldest message that raises an alarm and what that delays.
   */
  readonly onCall: {
    readonly deadLetter: string;
    readonly oldest?: { readonly seconds: number; readonly late: string };
  };
}

export const queues = {
  webhookDeliveries: {
    envVar: 'WEBHOOK_DELIVERIES_QUEUE_URL',
    fifo: true,
    visibilityTimeoutSeconds: 180,
    claimLeaseSeconds: 60,
    description:
      "FIFO: one message per attempt that is due now, its group the account, the receiver's origin and one of their lanes " +
      '(a failing or slow origin gets one lane, an account at most 40): a hanging receiver holds one sender per lane of its own, never more.',
    onCall: {
      deadLetter:
        '(database or queue faults, not receiver failures). Their deliveries stay pending; the retry route sends one again. ' +
        "One endpoint's attempts: saved query webhook-deliveries-of-one-endpoint.",
    },
  },
  webhookRetries: {
    envVar: 'WEBHOOK_RETRIES_QUEUE_URL',
    fifo: false,
    visibilityTimeoutSeconds: 180,
    description:
      'Standard: one message per attempt not yet due, delayed (DelaySeconds ≤ 900); when it comes due it moves to the ' +
      'deliveries queue, and a longer wait is re-delayed in hops of ≤ 900 s.',
    onCall: {
      deadLetter:
        '(database or queue faults, not receiver failures). Their deliveries stay pending; the retry route sends one again. ' +
        "One endpoint's attempts: saved query webhook-deliveries-of-one-endpoint.",
    },
  },
  issuanceFinalisation: {
    envVar: 'ISSUANCE_FINALISATION_QUEUE_URL',
    fifo: false,
    // Six times the finaliseIssuances worker's 20 s: a message it failed on is back 2 minutes later.
    visibilityTimeoutSeconds: 120,
    description:
      'Standard: one message per issuance of more than one transaction, sent before its first write and delayed ' +
      '(ISSUANCE_FINALISATION_DELAY_SECONDS, 30 s): the worker then finalises whatever pending codes the request left.',
    onCall: {
      deadLetter:
        "(database faults). Their issuances may have codes that are redeemable but missing from their generator's list. " +
        'The messages name account, generator and issuance; fix the cause, then redrive the queue (docs/operations.md, "Issuances not finalised").',
      oldest: {
        seconds: 240,
        late:
          "codes of some issuances are redeemable but missing from their generator's list for as long. " +
          'Look at the finaliseIssuances log group (issuance_not_finalised) and DynamoDB throttling on the codes table (docs/operations.md, "Issuances not finalised").',
      },
    },
  },
  issuanceJobs: {
    envVar: 'ISSUANCE_JOBS_QUEUE_URL',
    fifo: false,
    // Six times the runIssuanceJobs worker's 60 s: a chunk it failed on is back 6 minutes later.
    visibilityTimeoutSeconds: 360,
    description:
      "Standard: an issuance job's start (sent by its request before its first write) and one message per chunk of " +
      'its codes (1,000 each); every message is safe to handle twice: a chunk is recorded on the job once.',
    onCall: {
      deadLetter:
        '(database faults or throttling). Their jobs stay running with the progress they had, and their codes read as issued only once the job completes: ' +
        'fix the cause, then redrive the dead-letter queue (docs/operations.md, "Issuance jobs not making progress").',
      oldest: {
        seconds: 300,
        late:
          'some issuance jobs are not making progress: a chunk has waited as long for a worker. Look at the runIssuanceJobs log group (issuance_job_stalled) and ' +
          'DynamoDB throttling on the codes table (docs/operations.md, "Issuance jobs not making progress").',
      },
    },
  },
  fanOutFailures: {
    envVar: 'FAN_OUT_FAILURES_QUEUE_URL',
    fifo: false,
    // Six times the replay worker's 60 s timeout; ten receives (workers.ts) retry a batch for about an hour.
    visibilityTimeoutSeconds: 360,
    description:
      "Standard: the on-failure destination of the events stream's fan-out (a batch given up on after every retry, or older " +
      'than the record age): the shard and the range of sequence numbers, which replayFailedFanOuts reads back from the ' +
      'stream (24 h retention) and fans out again.',
    onCall: {
      deadLetter:
        '(reading them back from the events stream and fanning them out): their events have no deliveries. ' +
        'Fix the cause (the replay log group names it) and redrive the dead-letter queue to the failure queue while the stream still holds the records ' +
        '(24 h after their events); docs/webhooks.md, runbook "Fan-out batches given up on".',
    },
  },
  exports: {
    envVar: 'EXPORTS_QUEUE_URL',
    fifo: false,
    // Six times the writeExports worker's 300 s: a message it failed on (or whose worker died) is back 30 minutes later.
    visibilityTimeoutSeconds: 1800,
    description:
      'Standard: one message per export, sent by POST /v1.0/codegen/{id}/exports before its record is written; the writeExports worker ' +
      'pages the codes list into a CSV streamed to S3, then completes the export and writes export.completed.',
    onCall: {
      deadLetter:
        '(database or S3 faults). Their exports were marked failed on the last receive (the client creates a new one); the messages name account and export. ' +
        'Fix the cause (the writeExports log group, error_code export_not_written), then redrive if the exports should still complete (docs/operations.md, "Exports not making progress").',
      oldest: {
        seconds: 900,
        late:
          'exports are waiting that long to be written: clients see them running. Look at the writeExports log group (export_not_written), its throttles and ' +
          'concurrency, and DynamoDB throttling on the codes table (docs/operations.md, "Exports not making progress").',
      },
    },
  },
} as const satisfies Record<string, QueueSpec>;

export type QueueId = keyof typeof queues;

export const queueIds = Object.keys(queues) as QueueId[];
