import { randomBytes } from 'node:crypto';
import { routes, type HostId, type Route } from '../../functions/routes.ts';
import type { OpenApiChecker } from '../../openapi/check.ts';
import { createTillgate, type Tillgate } from '../../client/index.ts';

/**
 * One run of `npm run smoke`: real requests to a deployed stage (or `npm start`), each checked
 * for its status, the headers PRODUCT.md promises and the OpenAPI document, timed, and reported
 * as one line (an Outcome). The checks themselves are in checks.ts; this is what they share.
 *
 * The checks send their requests through the typed client (client/index.ts, `run.call`): each
 * request and each verified answer is typed by the documents. The client sends through the run's
 * own fetch, which adds the run's X-Request-Id, times the exchange and keeps the answer as
 * received, which is what is checked (not retried: the run reports what the stage answered).
 * Requests no client sends (without a token, to no route) go raw (`run.request`, `run.probe`).
 */
export interface SmokeOptions {
  readonly urls: Readonly<Record<HostId, string>>;
  readonly token: string;
  /** Where webhook deliveries of this run go; without it the webhook checks are skipped. */
  readonly webhookUrl?: string;
  /** The store_id of the run's code generator: a store no shop uses. */
  readonly storeId: number;
  /** Per request; API Gateway gives up on an integration after 29 s. */
  readonly timeoutMs: number;
  /** How long to wait for what the contract lets lag (index reads, webhook deliveries). */
  readonly settleMs: number;
  readonly checker: OpenApiChecker;
  /** Called once the run has its id, before the first request. */
  readonly onStart?: (run: SmokeRun) => void;
  /** Called with each outcome as it is known, for a live report. */
  readonly onOutcome?: (outcome: Outcome) => void;
  /** Aborted (Ctrl-C): no further check starts, and the cleanup runs. */
  readonly signal?: AbortSignal;
  /** Operations present in the route table (default: functions/routes.ts). */
  readonly routes?: readonly Route[];
}

type Result = 'ok' | 'fail' | 'skip' | 'info';

/** One line of the report. */
export interface Outcome {
  /** An operationId, or the gateway check's name. */
  readonly name: string;
  readonly result: Result;
  readonly method?: string;
  /** The path as sent, a promotion code shown as `{code}`. */
  readonly path?: string;
  /** What this request is about when an operation is checked more than once, e.g. `If-None-Match`. */
  readonly note?: string;
  readonly status?: number;
  readonly expected?: number;
  readonly latencyMs?: number;
  /** What is wrong (empty when the check passed); the first one is the headline. */
  readonly problems: readonly string[];
  /** Why a check was skipped, or what an info line says. */
  readonly reason?: string;
  /** Printed only on failure or with --verbose (pages after the first, polls). */
  readonly quiet?: boolean;
}

export interface SmokeResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: any;
  /** The status was the one expected and no problem was found. */
  readonly passed: boolean;
  /** This request's line of the report. */
  readonly outcome: Outcome;
  /** Only the contract checks of the body failed: an answer that may still change (an index that lags). */
  readonly lagging: boolean;
}

/** What a check says about a request besides the request itself: the status it expects, how it is reported. */
interface Expectation {
  readonly expect: number;
  readonly note?: string;
  readonly quiet?: boolean;
  /** What a wrong status most likely means for this request, instead of the general hint. */
  readonly hints?: Readonly<Record<number, string>>;
  /** Not reported: the caller decides (a poll reports its last try). See `report`. */
  readonly tentative?: boolean;
}

type Problems = (string | false | undefined)[] | string | false | undefined;
type Received = Omit<SmokeResponse, 'outcome' | 'passed' | 'lagging'>;

/** A raw request (`run.request`, `run.probe`): one no client sends. */
export interface RequestOptions extends Expectation {
  readonly params?: Record<string, string | number>;
  readonly query?: Record<string, string | number>;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Send no X-Auth-Token. */
  readonly anonymous?: boolean;
  /** Contract checks of the body beyond its schema: return (or throw) what is wrong. */
  readonly verify?: (response: Received) => Problems;
}

/** An answer of the typed client: its status, and its data or error typed by it. */
interface AnswerLike {
  readonly status: number;
}

/** A request through the typed client (`run.call`), expecting status `S` of its answers `A`. */
export interface CallOptions<A extends AnswerLike, S extends A['status']> extends Expectation {
  readonly expect: S;
  /** Contract checks of the answer beyond its schema, typed for the status expected: return (or throw) what is wrong. */
  readonly verify?: (answer: Extract<A, { status: S }>, received: Received) => Problems;
}

/** The checked response of `run.call`, with the client's typed answer (undefined when none came). */
export type CallResponse<A> = SmokeResponse & { readonly answer: A | undefined };

/** One exchange of the client's fetch: what was sent and when, and what came back. */
interface Exchange {
  readonly requestId: string;
  readonly method: string;
  /** Path and query as sent. */
  readonly target: string;
  readonly started: number;
  received?: { readonly status: number; readonly headers: Headers; readonly text: string; readonly latencyMs: number };
}

/** Thrown by a check that cannot run because an earlier one left nothing to work on. */
export class Skip extends Error {}

const READ_CACHE_CONTROL = 'max-age=0, private, must-revalidate';
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export class SmokeRun {
  readonly runId = randomBytes(4).toString('hex');
  readonly startedAt = new Date().toISOString();
  /** Every record the run makes carries this, so a person who finds one knows where it came from. */
  readonly label = `tillgate smoke run ${this.startedAt}`;
  readonly outcomes: Outcome[] = [];
  readonly routes: readonly Route[];
  private requests = 0;

  /** Both hosts' typed clients, sending through `exchange`. */
  readonly api: Tillgate;
  /** The client's last exchange: the run sends one request at a time. */
  private exchanged: Exchange | undefined;

  constructor(readonly options: SmokeOptions) {
    this.routes = options.routes ?? routes;
    this.api = createTillgate({
      coreUrl: options.urls.core,
      posUrl: options.urls.pos,
      token: options.token,
      fetch: (request) => this.exchange(request),
      retry: { retries: 0 },
    });
  }

  /** The client's fetch: the run's request id, no redirect followed, the time-out; the answer kept as received. */
  private async exchange(request: Request): Promise<Response> {
    const requestId = `smoke-${this.runId}-${++this.requests}`;
    const headers = new Headers(request.headers);
    headers.set('Accept', 'application/json');
    headers.set('X-Request-Id', requestId);
    const url = new URL(request.url);
    const exchange: Exchange = { requestId, method: request.method, target: `${url.pathname}${url.search}`, started: performance.now() };
    this.exchanged = exchange;
    const response = await fetch(new Request(request, { headers, redirect: 'manual', signal: AbortSignal.timeout(this.options.timeoutMs) }));
    const text = await response.clone().text();
    exchange.received = { status: response.status, headers: response.headers, text, latencyMs: performance.now() - exchange.started };
    return response;
  }

  has(operationId: string): boolean {
    return this.routes.some((route) => route.operationId === operationId);
  }

  route(operationId: string): Route {
    const route = this.routes.find((candidate) => candidate.operationId === operationId);
    if (!route) throw new Error(`${operationId} is not in the route table`);
    return route;
  }

  /** A value an earlier check should have left, or a Skip saying which. */
  need<T>(value: T | undefined | null, what: string, from: string): T {
    if (value === undefined || value === null) throw new Skip(`needs ${what} (${from} did not get one)`);
    return value;
  }

  /** Values never to print (the codes the run issued): an error message may quote one. */
  private readonly concealed = new Set<string>();
  conceal(...values: string[]) {
    for (const value of values) this.concealed.add(value.toLowerCase());
  }

  record(given: Outcome): Outcome {
    const hide = (text: string) => {
      let shown = text.replaceAll(this.options.token, '{token}');
      for (const value of this.concealed) shown = shown.replace(new RegExp(value.replace(/[^a-z0-9]/g, '\\$&'), 'gi'), '{code}');
      return shown;
    };
    const outcome = { ...given, problems: given.problems.map(hide), ...(given.reason ? { reason: hide(given.reason) } : {}) };
    this.outcomes.push(outcome);
    this.options.onOutcome?.(outcome);
    return outcome;
  }

  /** One raw request to the route of `operationId` (one no client sends: without a token), checked and reported. */
  async request(operationId: string, options: RequestOptions): Promise<SmokeResponse> {
    const route = this.route(operationId);
    // A parameter is found under its name in any spelling: {event_id} and {eventId} alike.
    const key = (name: string) => name.replace(/[^A-Za-z0-9]/g, '').toLowerCase();
    const params = new Map(Object.entries(options.params ?? {}).map(([name, value]) => [key(name), String(value)]));
    const fill = (hidden: boolean) =>
      route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const value = params.get(key(name));
        if (value === undefined) throw new Error(`${operationId}: no value for {${name}} of ${route.path}`);
        // A promotion code is worth money: it is sent, never printed.
        return hidden && key(name) === 'code' ? '{code}' : encodeURIComponent(value);
      });
    const query = options.query ? `?${new URLSearchParams(Object.entries(options.query).map(([k, v]): [string, string] => [k, String(v)]))}` : '';
    return this.send(route.host, route.method, fill(false) + query, {
      ...options,
      name: operationId,
      shownPath: fill(true) + query,
      answeredBy: 'function',
    });
  }

  /**
   * One request to the route of `operationId` through the typed client (`send` makes it with
   * `run.api`), checked and reported like any other; the answer typed by the documents beside it.
   */
  async call<A extends AnswerLike, S extends A['status']>(
    operationId: string,
    send: (api: Tillgate) => Promise<A>,
    options: CallOptions<A, S>,
  ): Promise<CallResponse<A>> {
    const route = this.route(operationId);
    const base = { name: operationId, method: route.method, path: route.path, note: options.note, expected: options.expect, quiet: options.quiet };
    this.exchanged = undefined;
    let answer: A;
    try {
      answer = await send(this.api);
    } catch (error) {
      const exchange = this.exchanged as Exchange | undefined;
      const latencyMs = exchange ? performance.now() - exchange.started : 0;
      const shown = exchange ? { method: exchange.method, path: this.shown(route, exchange.target) } : {};
      const outcome: Outcome = {
        ...base,
        ...shown,
        result: 'fail',
        latencyMs,
        problems: [unreachable(this.options.urls[route.host]!, error, this.options.timeoutMs)],
      };
      if (!options.tentative) this.record(outcome);
      return { status: 0, headers: new Headers(), text: '', json: undefined, passed: false, outcome, lagging: false, answer: undefined };
    }
    const exchange = this.exchanged as Exchange | undefined;
    if (!exchange?.received) throw new Error(`${operationId}: the client answered without sending a request`);
    const { status, headers, text, latencyMs } = exchange.received;
    const verify = options.verify;
    const judged = this.judge(route.host, exchange.method, exchange.target, {
      ...options,
      name: operationId,
      shownPath: this.shown(route, exchange.target),
      answeredBy: 'function',
      requestId: exchange.requestId,
      received: { status, headers, text, json: parse(text) },
      latencyMs,
      // The status is the one expected when verify runs: the answer is that status's.
      verify: verify && ((received) => verify(answer as Extract<A, { status: S }>, received)),
    });
    return { ...judged, answer };
  }

  /** The path as sent, a promotion code shown as `{code}` (it is worth money: sent, never printed). */
  private shown(route: Route, target: string): string {
    const [path, query] = target.split('?') as [string, string | undefined];
    const template = route.path.split('/');
    const shownPath = path
      .split('/')
      .map((segment, i) => (template[i] === '{code}' ? '{code}' : segment))
      .join('/');
    return query === undefined ? shownPath : `${shownPath}?${query}`;
  }

  /**
   * A request through the client repeated (every 250 ms, for at most `settleMs`) until it passes:
   * for what the contract lets lag, such as reads of an index. Only the last try is reported.
   */
  async poll<A extends AnswerLike, S extends A['status']>(
    operationId: string,
    send: (api: Tillgate) => Promise<A>,
    options: CallOptions<A, S>,
  ): Promise<CallResponse<A>> {
    let tries = 0;
    let last: CallResponse<A> | undefined;
    await settle(this.options.settleMs, async () => {
      tries++;
      last = await this.call(operationId, send, { ...options, tentative: true });
      // Only a body that may still change is worth asking for again.
      return !last.lagging;
    });
    const outcome = tries > 1 ? { ...last!.outcome, note: [last!.outcome.note, `${tries} tries`].filter(Boolean).join(', ') } : last!.outcome;
    this.record(outcome);
    return { ...last!, outcome };
  }

  /**
   * An item looked for in a list, page after page (`list` asks the client for the page after
   * `cursor`; later pages reported only when they fail or with --verbose), asked again until it
   * is there or `settleMs` have passed: a list may read an index that lags the write. The first
   * page's line says whether it was found.
   */
  async findListed<A extends AnswerLike>(
    operationId: string,
    list: (api: Tillgate, cursor: string | undefined) => Promise<A>,
    options: Expectation & { items: string; match: (item: any) => boolean; missing: string; verifyItem?: (item: any) => string | false | undefined },
  ): Promise<any> {
    let tries = 0;
    let first: SmokeResponse | undefined;
    let item: unknown;
    await settle(this.options.settleMs, async () => {
      tries++;
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const from = cursor;
        const response = await this.call(operationId, (api) => list(api, from), {
          ...options,
          note: page > 0 ? `page ${page + 1}` : options.note,
          tentative: page === 0,
          quiet: page > 0,
        });
        if (page === 0) first = response;
        if (!response.passed) return true;
        item = response.json[options.items].find(options.match);
        cursor = response.json.next_cursor ?? undefined;
        if (item || !cursor) return item !== undefined;
      }
      return false;
    });
    const outcome = first!.outcome;
    const problems = !first!.passed ? outcome.problems : item === undefined ? [options.missing] : [options.verifyItem?.(item)].filter((p): p is string => !!p);
    const note = [outcome.note, tries > 1 ? `${tries} tries` : undefined].filter(Boolean).join(', ') || undefined;
    this.record({ ...outcome, note, result: problems.length === 0 ? 'ok' : 'fail', problems });
    return item;
  }

  /** A request no route serves, or served without a token: what the gateway (or function) answers on its own. */
  async probe(
    name: string,
    host: HostId,
    method: string,
    path: string,
    options: RequestOptions & { answeredBy: 'gateway' | 'function' },
  ): Promise<SmokeResponse> {
    return this.send(host, method, path, { ...options, name, shownPath: path });
  }

  /** A raw request, sent as given. */
  private async send(
    host: HostId,
    method: string,
    path: string,
    options: RequestOptions & { name: string; shownPath: string; answeredBy: 'gateway' | 'function' },
  ): Promise<SmokeResponse> {
    const requestId = `smoke-${this.runId}-${++this.requests}`;
    const headers: Record<string, string> = { Accept: 'application/json', 'X-Request-Id': requestId, ...options.headers };
    if (!options.anonymous) headers['X-Auth-Token'] = this.options.token;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] = 'application/json';
    }
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.options.urls[host]}${path}`, {
        method,
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const latencyMs = performance.now() - started;
      const base = { name: options.name, method, path: options.shownPath, note: options.note, expected: options.expect, quiet: options.quiet };
      const outcome: Outcome = { ...base, result: 'fail', latencyMs, problems: [unreachable(this.options.urls[host]!, error, this.options.timeoutMs)] };
      if (!options.tentative) this.record(outcome);
      return { status: 0, headers: new Headers(), text: '', json: undefined, passed: false, outcome, lagging: false };
    }
    const latencyMs = performance.now() - started;
    return this.judge(host, method, path, {
      ...options,
      requestId,
      received: { status: response.status, headers: response.headers, text, json: parse(text) },
      latencyMs,
    });
  }

  /** An answer checked: its status, the conventions, the document, then `verify`; reported unless tentative. */
  private judge(
    host: HostId,
    method: string,
    path: string,
    options: Expectation & {
      name: string;
      shownPath: string;
      answeredBy: 'gateway' | 'function';
      requestId: string;
      received: Received;
      latencyMs: number;
      verify?: ((response: Received) => Problems) | undefined;
    },
  ): SmokeResponse {
    const { received: result, requestId, latencyMs } = options;
    const base = { name: options.name, method, path: options.shownPath, note: options.note, expected: options.expect, quiet: options.quiet };
    const problems: string[] = [];
    let lagging = false;
    if (result.status !== options.expect) {
      const meaning = options.hints?.[result.status] ? ` (${options.hints[result.status]})` : hint(host, result.status, result);
      problems.push(`expected ${options.expect}, got ${result.status}${errorSummary(result)}${meaning}`);
    } else {
      problems.push(...this.conventionProblems(host, method, result, requestId, options.answeredBy));
      const flagged = problems.join(' ');
      const documented = this.options.checker.problems(host, method, path.split('?')[0]!, result);
      // A header the contract checks already named is not named twice.
      problems.push(...documented.filter((problem) => !/header ([\w-]+)/.test(problem) || !flagged.includes(/header ([\w-]+)/.exec(problem)![1]!)));
      if (problems.length === 0 && options.verify) {
        try {
          const found = options.verify(result);
          for (const problem of [found].flat()) if (problem) problems.push(problem);
          lagging = problems.length > 0;
        } catch (error) {
          problems.push(`unexpected body (${(error as Error).message}): ${result.text.slice(0, 200)}`);
        }
      }
    }
    const outcome: Outcome = { ...base, status: result.status, latencyMs, result: problems.length === 0 ? 'ok' : 'fail', problems };
    if (!options.tentative) this.record(outcome);
    return { ...result, passed: problems.length === 0, outcome, lagging };
  }

  /** The response conventions of PRODUCT.md that the OpenAPI document states loosely or not at all. */
  private conventionProblems(
    host: HostId,
    method: string,
    response: { status: number; headers: Headers; text: string },
    requestId: string,
    answeredBy: 'gateway' | 'function',
  ): string[] {
    const problems: string[] = [];
    const header = (name: string) => response.headers.get(name);
    const notModified = response.status === 304;

    const contentType = header('content-type');
    if (!notModified && contentType !== JSON_CONTENT_TYPE) {
      problems.push(
        contentType === null
          ? 'no Content-Type header'
          : `header Content-Type is ${JSON.stringify(contentType)}, expected ${JSON.stringify(JSON_CONTENT_TYPE)}`,
      );
    }
    const echoed = header('x-request-id');
    if (echoed === null) problems.push('no X-Request-Id header');
    else if (answeredBy === 'function' && echoed !== requestId) {
      problems.push(`header X-Request-Id is ${JSON.stringify(echoed)}, expected the one sent (${requestId}) echoed`);
    }
    if (header('cache-control') === null) problems.push('no Cache-Control header');

    if (host === 'core' && answeredBy === 'function') {
      if (header('x-runtime') === null) problems.push('no X-Runtime header (the core host answers with its handler time)');
      const success = response.status >= 200 && response.status < 300;
      const read = method === 'GET' && response.status === 200;
      const cacheControl = header('cache-control');
      const expectedCache = read || notModified ? READ_CACHE_CONTROL : 'no-store';
      if (cacheControl !== null && cacheControl !== expectedCache) {
        problems.push(`header Cache-Control is ${JSON.stringify(cacheControl)}, expected ${JSON.stringify(expectedCache)}`);
      }
      const etag = header('etag');
      const jsonBody = success && response.text !== '' && response.text !== ' ';
      if (jsonBody && etag === null) problems.push('no ETag header on a successful JSON body');
      if (notModified && etag === null) problems.push('no ETag header on a 304');
      if (etag !== null && !/^W\/"[^"]*"$/.test(etag)) problems.push(`header ETag ${JSON.stringify(etag)} is not a weak entity tag`);
      if (!success && !notModified && etag !== null) problems.push(`header ETag on an error (${response.status}): a client could take it for the resource's`);
    }
    return problems;
  }
}

/** The body as JSON, or undefined when it is not JSON. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The messages of an error body in either host's shape, for the report line. */
function errorSummary(response: { status: number; text: string; json: any }): string {
  if (response.status < 400) return '';
  const messages: unknown[] =
    response.json?.errors?.map((error: { message?: unknown }) => error?.message) ??
    response.json?.transaction?.errors?.map((error: { message?: unknown }) => error?.message) ??
    [];
  const text = messages.filter((message) => typeof message === 'string').join('; ');
  if (text) return `: ${text}`;
  if (response.text.trim() === '') return '';
  return `: ${response.text.replace(/\s+/g, ' ').slice(0, 120)}`;
}

/** What a status most likely means for the operator who gave these URLs and token. */
function hint(host: HostId, status: number, response: { text: string; headers: Headers }): string {
  if (status >= 300 && status < 400) {
    return ` (a redirect to ${response.headers.get('location') ?? 'somewhere'}, which a till would not follow: give --${host}-url as the stage answers it, e.g. https://)`;
  }
  if (status === 401) return ' (is --token a live token of this stage?)';
  if (status === 403) return ` (the token's scope does not cover the ${host} host: use a token of scope all)`;
  if (status === 404 && response.text.includes('No route for this method and path')) {
    return ` (no such route on this host: is --${host}-url the ${host} host of a stage with this version deployed?)`;
  }
  if (status === 429) return ' (throttled: the token is over its rate limit, or the stage over its ceiling)';
  return '';
}

function unreachable(url: string, error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer from ${url} within ${timeoutMs / 1000} s`;
  return `cannot reach ${url}: ${e.cause?.code ?? e.cause?.message ?? e.message}`;
}

/** Calls `attempt` until it says it is done or `ms` have passed: for what the contract lets lag. */
async function settle(ms: number, attempt: (last: boolean) => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const last = Date.now() >= deadline;
    if ((await attempt(last)) || last) return;
    await new Promise((done) => setTimeout(done, 250));
  }
}
