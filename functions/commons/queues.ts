/**
 * Every SQS queue the functions send to, declared once (as tables.ts declares the tables). The
 * CDK stack creates them, grants `sqs:SendMessage` to the routes and workers that name them and
 * hands them the URL in the environment variable named here; the local stack stands an
 * in-process queue in for each (local/webhooks.ts).
 */
export interface QueueSpec {
  /** Environment variable through which a function learns the queue's URL. */
  readonly envVar: string;
  readonly description: string;
}

export const queues = {
  webhookDeliveries: {
    envVar: 'WEBHOOK_DELIVERIES_QUEUE_URL',
    description:
      'One message per attempt of one delivery, delayed (DelaySeconds ≤ 900) until the attempt is due; a longer wait is re-delayed in hops of ≤ 900 s.',
  },
} as const satisfies Record<string, QueueSpec>;

export type QueueId = keyof typeof queues;

export const queueIds = Object.keys(queues) as QueueId[];
