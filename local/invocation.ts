import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';

/**
 * Each local invocation starts outside the invocation that caused it, as in Lambda, though the
 * local stack runs every route and every worker side by side in this one process: a route's
 * message can reach its worker while the route is still running, and nothing of the route's async
 * context (its deadline, see functions/runtime/deadline.ts) may follow it.
 * Not yet isolated: the one Powertools logger of the process (a route's log line can carry a
 * worker's function_name). Powertools keeps it per invocation only with AWS_LAMBDA_MAX_CONCURRENCY
 * set and the runtime's `globalThis.awslambda.InvokeStore`; setting that variable here leaks into
 * the test files that share a vitest worker and never load this module (they then fail with
 * "InvokeStore is not available").
 */
const outside = AsyncLocalStorage.snapshot();

/** Runs one invocation of `handler` outside the caller's async context. */
export function runInvocation<Event, Result>(handler: (event: Event, context: Context) => Promise<Result>, event: Event, context: Context): Promise<Result> {
  return outside(() => handler(event, context));
}
