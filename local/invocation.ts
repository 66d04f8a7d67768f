import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';

/**
 * Each local invocation on its own, as in Lambda, though the local stack runs every route and
 * every worker side by side in this one process (as Lambda runs several invocations in one
 * execution environment when AWS_LAMBDA_MAX_CONCURRENCY is set, on Lambda Managed Instances):
 * - it starts outside the invocation that caused it: a route's message can reach its worker
 *   while the route is still running, and nothing of the route's async context (its deadline,
 *   see functions/runtime/deadline.ts) may follow it;
 * - it runs in its own invocation store. Powertools keeps what belongs to one invocation (the
 *   logger's Lambda context, its temporary keys and log level, the metrics' buffer and
 *   dimensions, the batch processor's state) in `globalThis.awslambda.InvokeStore` when
 *   AWS_LAMBDA_MAX_CONCURRENCY is set (commons' shouldUseInvokeStore, InvocationScoped), and
 *   otherwise in the one instance of each module, shared by every invocation of the process.
 *   Without the store, the logger carried whichever invocation had last started: route lines
 *   named a worker's function_name and function_request_id, or another request's.
 * Lambda's runtime provides the store and sets the variable in AWS; the local stack is the runtime
 * here, so this module does both when it loads (whoever loads the local invokers: npm start, the
 * bench, the tests; vitest.config.ts loads it in every test process, which all inherit the variable
 * from the global setup). Nothing under functions/ knows of it: in AWS a function's environment runs
 * one invocation at a time, the variable is unset, and Powertools keeps its state as before.
 */
const REQUEST_ID = Symbol.for('_AWS_LAMBDA_REQUEST_ID');
const PROTECTED = new Set<string | symbol>(
  ['REQUEST_ID', 'X_RAY_TRACE_ID', 'TENANT_ID', 'TRACEPARENT', 'TRACESTATE', 'BAGGAGE'].map((name) => Symbol.for(`_AWS_LAMBDA_${name}`)),
);
/** Marks the store as this module's, so a second load of the module (vitest) reuses it. */
const LOCAL = Symbol.for('tillgate.local.invokeStore');

type Store = Record<string | symbol, unknown>;

/**
 * What Powertools and the AWS SDK read of the runtime's InvokeStore (@aws/lambda-invoke-store,
 * its AsyncLocalStorage implementation). One difference: outside every invocation (a test calling
 * a handler directly) get and set reach one store shared by all, as when Lambda runs one invocation
 * at a time, where the runtime's would throw "No context available" (Powertools' batch processor
 * writes to the store whether or not an invocation is running; the logger and metrics keep their
 * own shared state when hasContext() is false).
 */
class LocalInvokeStore {
  readonly [LOCAL] = true;
  readonly #invocations = new AsyncLocalStorage<Store>();
  readonly #outside: Store = {};

  #current(): Store {
    return this.#invocations.getStore() ?? this.#outside;
  }
  getContext(): Store | undefined {
    return this.#invocations.getStore();
  }
  hasContext(): boolean {
    return this.#invocations.getStore() !== undefined;
  }
  get<T = unknown>(key: string | symbol): T | undefined {
    return this.#current()[key] as T | undefined;
  }
  set<T = unknown>(key: string | symbol, value: T): void {
    if (PROTECTED.has(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    this.#current()[key] = value;
  }
  run<T>(context: Store, fn: () => T): T {
    return this.#invocations.run(context, fn);
  }
  getRequestId(): string {
    return this.get<string>(REQUEST_ID) ?? '-';
  }
  // No X-Ray, tenant or W3C trace context locally: Powertools then reads _X_AMZN_TRACE_ID.
  getXRayTraceId(): string | undefined {
    return undefined;
  }
  getTenantId(): string | undefined {
    return undefined;
  }
  getTraceparent(): string | undefined {
    return undefined;
  }
  getTracestate(): string | undefined {
    return undefined;
  }
  getBaggage(): string | undefined {
    return undefined;
  }
}

const lambda = ((globalThis as { awslambda?: { InvokeStore?: unknown } }).awslambda ??= {});
// Replaces any other store: the AWS SDK installs the runtime package's one-invocation store when it
// makes its first request before this module loads.
const installed = lambda.InvokeStore;
const store = installed instanceof Object && LOCAL in installed ? (installed as LocalInvokeStore) : new LocalInvokeStore();
lambda.InvokeStore = store;
// Powertools only asks whether it is set; the local stack sets no limit.
process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';

/** Taken when this module loads, outside every invocation. */
const outside = AsyncLocalStorage.snapshot();

/** Runs one invocation of `handler` outside the caller's async context, in its own invocation store. */
export function runInvocation<Event, Result>(handler: (event: Event, context: Context) => Promise<Result>, event: Event, context: Context): Promise<Result> {
  return outside(() => store.run({ [REQUEST_ID]: context.awsRequestId }, () => handler(event, context)));
}
