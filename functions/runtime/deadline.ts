import { AsyncLocalStorage } from 'node:async_hooks';
import type { PluginExecutionMode } from '@middy/core';
import { executionModeStandard } from '@middy/core/executionModeStandard';
import type { Context } from 'aws-lambda';
import { numberFromEnv } from './config.ts';

/**
 * Every invocation answers before its Lambda timeout, whatever it is waiting for.
 *
 * The deadline is the Lambda's remaining time minus TIMEOUT_RESERVE_MS (default 1000 ms), kept
 * back to write the 503, its log line and its metrics. Two mechanisms enforce it:
 *
 * - **DynamoDB, in every stage** (the token lookup in a `before` middleware as much as the
 *   handler's writes): the invocation's deadline signal sits in an AsyncLocalStorage, and
 *   clients.ts hands it to every DynamoDB call as its `abortSignal`. The SDK then aborts the
 *   attempt in flight, and stops sleeping between retries, when the deadline passes; the call
 *   fails with a DeadlineExceededError, which answers 503 with Retry-After (errors.ts). So the
 *   total of a call's attempts is bounded by the time the invocation has left.
 * - **The handler, whatever it awaits**: middy's own early timeout (`timeoutEarlyInMillis`)
 *   races the handler against the same moment. It covers the handler only (middy starts it
 *   after the `before` middlewares), hence the first mechanism.
 *
 * Locally, the local server gives each invocation the 10 s of the deployed functions.
 */
export const TIMEOUT_RESERVE_MS = numberFromEnv('TIMEOUT_RESERVE_MS', 1000);

/** The invocation ran out of time; a retry later can succeed (503, Retry-After). */
export class DeadlineExceededError extends Error {
  constructor(message = 'The invocation reached its deadline', options?: ErrorOptions) {
    super(message, options);
    this.name = 'DeadlineExceededError';
  }
}

const current = new AsyncLocalStorage<AbortSignal>();

/** The signal of the invocation running now, aborted at its deadline; none outside one. */
export function deadlineSignal(): AbortSignal | undefined {
  return current.getStore();
}

/** Runs `work` with a deadline of `remainingMs - TIMEOUT_RESERVE_MS` from now. */
export async function withDeadline<T>(remainingMs: number | undefined, work: () => Promise<T>): Promise<T> {
  if (remainingMs === undefined || !Number.isFinite(remainingMs)) return work();
  const controller = new AbortController();
  const budget = Math.max(0, remainingMs - TIMEOUT_RESERVE_MS);
  const timer = setTimeout(() => controller.abort(new DeadlineExceededError(`The invocation reached its deadline (${budget} ms)`)), budget);
  try {
    return await current.run(controller.signal, work);
  } finally {
    clearTimeout(timer);
    // The invocation has answered. When middy's early time-out answered first (its timer and
    // ours are due at the same moment, in either order), a DynamoDB call of the handler may still
    // be running or waiting to retry: stop it, so it cannot write after the client got its 503 (in
    // Lambda, a frozen call would resume with the next invocation).
    if (!controller.signal.aborted) controller.abort(ANSWERED);
  }
}

/** One reason for every invocation's final abort: an Error per request would capture a stack each time. */
const ANSWERED = new DeadlineExceededError('The invocation has already answered');

type ExecutionMode = (
  parts: { middyRequest: unknown; runRequest: (request: { context: Context }, ...rest: unknown[]) => Promise<unknown> },
  ...rest: unknown[]
) => unknown;
const standard = executionModeStandard as unknown as ExecutionMode;

/**
 * middy's plugin options for every chain (http/chain.ts, worker-chain.ts): the standard execution mode with each
 * request run inside its deadline, and middy's early timeout at the same moment.
 */
export const deadlinePlugin = {
  timeoutEarlyInMillis: TIMEOUT_RESERVE_MS,
  timeoutEarlyResponse: () => {
    throw new DeadlineExceededError('The handler did not finish before the invocation deadline');
  },
  executionMode: ((parts, ...rest) =>
    standard(
      {
        ...parts,
        runRequest: (request, ...args) => withDeadline(request.context.getRemainingTimeInMillis?.(), () => parts.runRequest(request, ...args)),
      },
      ...rest,
    )) as ExecutionMode as unknown as PluginExecutionMode,
};
