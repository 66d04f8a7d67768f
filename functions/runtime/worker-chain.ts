import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { workers, type Worker } from '#functions/workers';
import { deadlinePlugin } from './deadline.ts';
import { logger, metrics } from './observability.ts';

/**
 * The chain every worker of functions/workers.ts runs in, as api() is the routes' (http/chain.ts):
 *   deadline (its own, whatever invoked it) → Lambda context on log lines → metrics flush →
 *   handler.
 * Each invocation runs inside its own deadline (deadline.ts): its DynamoDB calls stop, and the
 * handler answers, before the Lambda timeout; and on the local stack, where a route's message
 * reaches its worker in the same process, the route's deadline does not follow the message into
 * the worker (it used to: the route answered, its deadline aborted the sender's claim with "The
 * invocation has already answered", and the attempt left 5 s later, on the message's second
 * receive).
 * Partial batch failures are the handler's: it answers a batch response (Powertools' batch
 * processor where a record is the unit of work, see send-webhook-deliveries.ts).
 */
interface Triggers {
  readonly stream: { readonly event: DynamoDBStreamEvent; readonly result: DynamoDBBatchResponse };
  readonly queue: { readonly event: SQSEvent; readonly result: SQSBatchResponse };
}

type Kind = Worker['trigger']['kind'];

/** A worker's handler; the tests call it without a Lambda context (middy then gives it `{}`). */
export type WorkerHandler<K extends Kind> = (event: Triggers[K]['event'], context?: Context) => Promise<Triggers[K]['result']>;

/**
 * Flushes the metrics the invocation recorded, after the handler or its error. Not Powertools'
 * logMetrics: it logs a warning ("No application metrics to publish") for every invocation that
 * recorded none, which is most of the forwarder's and the sender's (a stale or moved message).
 */
const flushMetrics: MiddlewareObj = {
  after: () => flush(),
  onError: () => flush(),
};
function flush(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}

export function worker<K extends Kind>(kind: K, name: string) {
  // A worker is declared once, in its row of the worker table (its trigger, grants and timeout);
  // a handler without a row, or with another trigger than its row's, fails at load.
  const row = workers.find((w) => w.name === name);
  if (!row || row.trigger.kind !== kind) throw new Error(`No ${kind} worker ${name} in functions/workers.ts`);
  const chain = middy<Triggers[K]['event'], Triggers[K]['result'], Error, Context>(deadlinePlugin)
    // Never the event, whatever POWERTOOLS_LOGGER_LOG_EVENT says: stream records and queued
    // deliveries carry the events' payloads, codes included (docs/security.md, "What is never logged").
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    .use(flushMetrics);
  return {
    handler: (handle: (event: Triggers[K]['event'], context: Context) => Promise<Triggers[K]['result']>): WorkerHandler<K> =>
      chain.handler(handle) as WorkerHandler<K>,
  };
}
