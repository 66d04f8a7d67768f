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
  readonly description: string;
}

export const queues = {
  webhookDeliveries: {
    envVar: 'WEBHOOK_DELIVERIES_QUEUE_URL',
    fifo: true,
    visibilityTimeoutSeconds: 180,
    description:
      "FIFO: one message per attempt that is due now, its group the account, the receiver's origin and one of their lanes " +
      '(a failing or slow origin gets one lane, an account at most 40): a hanging receiver holds one sender per lane of its own, never more.',
  },
  webhookRetries: {
    envVar: 'WEBHOOK_RETRIES_QUEUE_URL',
    fifo: false,
    visibilityTimeoutSeconds: 180,
    description:
      'Standard: one message per attempt not yet due, delayed (DelaySeconds ≤ 900); when it comes due it moves to the ' +
      'deliveries queue, and a longer wait is re-delayed in hops of ≤ 900 s.',
  },
} as const satisfies Record<string, QueueSpec>;

export type QueueId = keyof typeof queues;

export const queueIds = Object.keys(queues) as QueueId[];
