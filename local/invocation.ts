import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';

/**
 * Each local invocation on its own, as in Lambda, though the local stack runs every route and
 * every worker side by side in this one process (as Lambda Managed Instances run several
 * invocations in one execution environment):
 * - it starts outside the invocation that caused it: a route's message reaches its worker while
 *   the route is still running, and nothing of the route's async context (its deadline, see
 *   functions/runtime/deadline.ts) may follow it;
 * - it has its own invocation store, where Powertools keeps the logger's Lambda context and keys
 *   and the metrics' buffer per invocation once AWS_LAMBDA_MAX_CONCURRENCY is set (Powertools
 *   reads `globalThis.awslambda.InvokeStore`, which Lambda's runtime provides). Without it the
 *   one logger of the process carried the last invocation's context: route log lines named a
 *   worker's function and request id.
 * Production code knows nothing of this: the runtime does it in AWS, the local stack here.
 */
const REQUEST_ID = Symbol.for('_AWS_LAMBDA_REQUEST_ID');
type Store = Record<string | symbol, unknown>;
const stores = new AsyncLocalStorage<Store>();

/**
 * Outside every invocation (a test calling a handler directly) one store for all, as when Lambda
 * runs one invocation at a time: Powertools' batch processor writes to the store whether or not an
 * invocation is running.
 */
const shared: Store = {};
const current = () => stores.getStore() ?? shared;

/** The part of the runtime's InvokeStore that Powertools and the AWS SDK read. */
const invokeStore = {
  getContext: () => stores.getStore(),
  hasContext: () => stores.getStore() !== undefined,
  get: (key: string | symbol) => current()[key],
  set: (key: string | symbol, value: unknown) => {
    current()[key] = value;
  },
  run: <T>(context: Store, fn: () => T): T => stores.run(context, fn),
  getRequestId: () => String(current()[REQUEST_ID] ?? '-'),
  getXRayTraceId: () => undefined,
  getTenantId: () => undefined,
  getTraceparent: () => undefined,
  getTracestate: () => undefined,
  getBaggage: () => undefined,
};
const lambda = ((globalThis as { awslambda?: Record<string, unknown> }).awslambda ??= {});
lambda.InvokeStore = invokeStore;
process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';

/** Taken when this module loads, outside every invocation. */
const outside = AsyncLocalStorage.snapshot();

/** Runs one invocation of `handler` outside the caller's async context, with its own invocation store. */
export function runInvocation<Event, Result>(handler: (event: Event, context: Context) => Promise<Result>, event: Event, context: Context): Promise<Result> {
  return outside(() => stores.run({ [REQUEST_ID]: context.awsRequestId }, () => handler(event, context)));
}
