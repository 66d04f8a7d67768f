/**
 * tillgate's typed client: both hosts' every request and answer typed from the OpenAPI documents.
 *
 *   const tillgate = createTillgate({ coreUrl: 'https://core.example', posUrl: 'https://pos.example', token });
 *   const result = await tillgate.core.GET('/v1.0/codegen/{id}', { params: { path: { id } } });
 *   if (result.status === 200) console.log(result.data.code_generator.description);
 *   else if (result.status === 404) console.log(result.error.errors[0]?.message);
 *
 * Built on openapi-typescript (the types: client/core.ts and client/pos.ts, generated from
 * openapi/core.json and openapi/pos.json at its default options by `npm run openapi`) and
 * openapi-fetch (the calls). Why these two: both are maintained (one project, regular releases);
 * the types exist only at build time, so what runs is openapi-fetch alone, about 6 kB, a thin
 * layer over the platform's `fetch`, which runs unchanged in Node 24, browsers and Lambda; a
 * change of the documents is one regeneration, no generated runtime code to review. Considered
 * and not chosen: orval (generates runtime code per operation, aimed at React Query/SWR hooks),
 * hey-api/openapi-ts (also generates an SDK's runtime code; pre-1.0, breaking changes in minor
 * releases), openapi-generator's typescript-fetch (a Java tool to install beside Node, and
 * generated classes and runtime to commit and review).
 *
 * What this file adds to openapi-fetch, as its middleware, for what the contract says:
 * - `X-Auth-Token` on every request.
 * - A `DELETE` of an event or a webhook endpoint answers `200` with a body of one space, labelled
 *   `application/json` although it is not JSON: openapi-fetch would throw parsing it, after the
 *   server has deleted. A blank successful `DELETE` answer is success with `data` undefined.
 * - A `GET` with `If-None-Match` may answer `304` with no body: `status` 304, no `data`, no
 *   `error`, nothing thrown; keep what you had.
 * - Retries, only where repeating a request cannot do a thing twice: `GET`s; the pos host's three
 *   writes (a void, a redemption, a check are keyed by site_id and pos_transaction_id: a repeat
 *   answers the first result and writes nothing); the core `POST`s that take an
 *   `Idempotency-Key`, when they carry one. Those are retried after a network failure (the
 *   request may or may not have reached the server) and on `503` with `Retry-After` (waiting that
 *   many seconds, capped: the database was throttling, unreachable or slow, and a slow write may
 *   still have been applied, so other requests are not repeated on a 503 either). At most
 *   `retries` times. Nothing else is retried: not another 4xx or 5xx, not a `429`.
 * - Answers typed by status: each call resolves to `{ status, data, error, response }` where
 *   `status` is one of the operation's documented statuses and narrows `data` (2xx) or `error`
 *   (the body documented for that status): `if (result.status === 409) result.error.transaction…`.
 *
 * This folder imports nothing of the service (dependency-cruiser's rule client-stands-alone): an
 * integrator copies client/ and adds openapi-fetch.
 */
import createClient, { type Client, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { operations as CoreOperations, paths as CorePaths } from './core.ts';
import type { operations as PosOperations, paths as PosPaths } from './pos.ts';

export type { CorePaths, PosPaths };

type JsonBody<Operation> = Operation extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;
/** The JSON body of a core operation's request, by operationId: `CoreBody<'createCodeGenerator'>`. */
export type CoreBody<Id extends keyof CoreOperations> = JsonBody<CoreOperations[Id]>;
/** The JSON body of a pos operation's request, by operationId: `PosBody<'voidTransaction'>`. */
export type PosBody<Id extends keyof PosOperations> = JsonBody<PosOperations[Id]>;
/** The query parameters of a core operation, by operationId: `CoreQuery<'listEvents'>`. */
export type CoreQuery<Id extends keyof CoreOperations> = NonNullable<CoreOperations[Id]['parameters']['query']>;

export interface RetryOptions {
  /** Retries after the first attempt, at most (default 3). 0 turns retrying off. */
  readonly retries?: number;
  /** The longest `Retry-After` waited, in seconds (default 10): a longer one is waited this long. */
  readonly maxRetryAfterSeconds?: number;
  /** The wait before retry `n` (1, 2, …) after a network failure, in ms (default 200, 400, 800…). */
  readonly networkDelayMs?: (retry: number) => number;
  /** How to wait `ms` milliseconds (default: a timer). Tests give one that returns at once. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface TillgateOptions {
  /** The core host's base URL (`{base_url}` of openapi/core.json), without `/v1.0`. */
  readonly coreUrl: string;
  /** The pos host's base URL (`{pos_base_url}` of openapi/pos.json), without `/v2.0`. */
  readonly posUrl: string;
  /** The API token sent as `X-Auth-Token` (scope core, pos or all, as the calls need). */
  readonly token: string;
  /** The fetch to send every request with (default: the global fetch). */
  readonly fetch?: (request: Request) => Promise<Response>;
  readonly retry?: RetryOptions;
}

// ---- Answers typed by status ------------------------------------------------------------------

type OkStatus = 200 | 201 | 202 | 203 | 204 | 206 | 207;
type ResponsesOf<Operation> = Operation extends { responses: infer Responses } ? Responses : never;
type JsonOf<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : undefined;

/**
 * The answer of an operation, one member per documented status: a 2xx carries `data` (its JSON
 * body; undefined where it has none), any other status `error` (the body documented for that
 * status; undefined for a 304). Narrow on `status`.
 */
export type Answer<Operation> = {
  [Status in keyof ResponsesOf<Operation> & number]: Status extends OkStatus
    ? { readonly status: Status; readonly data: JsonOf<ResponsesOf<Operation>[Status]>; readonly error?: never; readonly response: Response }
    : { readonly status: Status; readonly data?: never; readonly error: JsonOf<ResponsesOf<Operation>[Status]>; readonly response: Response };
}[keyof ResponsesOf<Operation> & number];

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
type PathsWith<Paths, M extends Method> = { [Path in keyof Paths]: Paths[Path] extends { [K in M]: object } ? Path : never }[keyof Paths];
type RequiredKeysOf<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? never : K }[keyof T];
/** openapi-fetch's own rule: the options argument is required when the operation has a required parameter or body. */
type InitArgument<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];
/** Answers are read as JSON, which `Answer` types: openapi-fetch's `parseAs` other than "json" does not fit it. */
type TypedMethod<Paths, M extends Method> = <Path extends PathsWith<Paths, M>, Init extends MaybeOptionalInit<Paths[Path], M & keyof Paths[Path]>>(
  url: Path,
  ...init: InitArgument<Init>
) => Promise<Answer<Paths[Path][M & keyof Paths[Path]]>>;

/** An openapi-fetch client whose calls resolve to an `Answer` (typed by status). */
export type TillgateClient<Paths extends {}> = Omit<Client<Paths>, 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH'> & {
  readonly GET: TypedMethod<Paths, 'get'>;
  readonly PUT: TypedMethod<Paths, 'put'>;
  readonly POST: TypedMethod<Paths, 'post'>;
  readonly DELETE: TypedMethod<Paths, 'delete'>;
  readonly PATCH: TypedMethod<Paths, 'patch'>;
};

export interface Tillgate {
  readonly core: TillgateClient<CorePaths>;
  readonly pos: TillgateClient<PosPaths>;
}

// ---- Middleware ---------------------------------------------------------------------------------

const authentication = (token: string): Middleware => ({
  onRequest({ request }) {
    request.headers.set('X-Auth-Token', token);
  },
});

/**
 * The same answer without a body: Content-Length 0 and no Transfer-Encoding, which openapi-fetch
 * reads as "no body, nothing to parse" (with a chunked Transfer-Encoding left, as a proxy may
 * send the one-space body, it would parse it as JSON after all).
 */
function withoutBody(response: Response): Response {
  const headers = new Headers(response.headers);
  headers.set('Content-Length', '0');
  headers.delete('Transfer-Encoding');
  return new Response(null, { status: response.status, statusText: response.statusText, headers });
}

const emptyAnswers: Middleware = {
  async onResponse({ request, response }) {
    // 304: no body by definition (and no Content-Length): nothing to parse, nothing to throw.
    if (response.status === 304) return withoutBody(response);
    // A DELETE's " ": labelled JSON, not JSON. Any blank successful DELETE answer is read as no body.
    if (request.method === 'DELETE' && response.ok && (await response.clone().text()).trim() === '') return withoutBody(response);
    return undefined;
  },
};

/** The pos host's writes: each keyed by site_id and pos_transaction_id, a repeat answers the first result and writes nothing. */
const POS_IDEMPOTENT = new Set(['/v2.0/voided_transactions', '/v2.0/redeemed_codes', '/v2.0/validated_codes']);
/** The core host's POSTs that honour an Idempotency-Key (a repeat with the same key answers the first response). */
export const CORE_KEYED_POSTS: ReadonlySet<string> = new Set([
  '/v1.0/codegen',
  '/v1.0/codegen/{id}/codes',
  '/v1.0/codegen/{id}/exports',
  '/v1.0/webhook_endpoints',
]);

function repeatable(request: Request, schemaPath: string): boolean {
  if (request.method === 'GET' || request.method === 'HEAD') return true;
  if (request.method !== 'POST') return false;
  return POS_IDEMPOTENT.has(schemaPath) || (CORE_KEYED_POSTS.has(schemaPath) && request.headers.has('Idempotency-Key'));
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date (undefined when absent or unreadable). */
function retryAfterSeconds(response: Response): number | undefined {
  const value = response.headers.get('Retry-After')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** A failure of the network (fetch rejects with a TypeError), not an abort the caller asked for. */
const isNetworkFailure = (error: unknown, request: Request) => error instanceof TypeError && !request.signal.aborted;

function retrying(options: RetryOptions): Middleware {
  const retries = options.retries ?? 3;
  const maxWaitMs = (options.maxRetryAfterSeconds ?? 10) * 1000;
  const networkDelayMs = options.networkDelayMs ?? ((retry: number) => 200 * 2 ** (retry - 1));
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  /** A copy of each repeatable request as it was sent (the sent one's body is consumed). */
  const copies = new WeakMap<Request, Request>();

  /** Sends the copy again until an answer that is not a 503 with Retry-After, or the retries are spent. */
  async function again(request: Request, send: (request: Request) => Promise<Response>, first: { waitMs: number }): Promise<Response> {
    const copy = copies.get(request)!;
    let waitMs = first.waitMs;
    for (let retry = 1; ; retry++) {
      await sleep(waitMs);
      let response: Response;
      try {
        response = await send(copy.clone());
      } catch (error) {
        if (retry >= retries || !isNetworkFailure(error, request)) throw error;
        waitMs = networkDelayMs(retry + 1);
        continue;
      }
      const seconds = response.status === 503 ? retryAfterSeconds(response) : undefined;
      if (seconds === undefined || retry >= retries) return response;
      await response.body?.cancel();
      waitMs = Math.min(seconds * 1000, maxWaitMs);
    }
  }

  return {
    onRequest({ request, schemaPath }) {
      if (retries > 0 && repeatable(request, schemaPath)) copies.set(request, request.clone());
    },
    async onResponse({ request, response, options: { fetch } }) {
      if (response.status !== 503 || !copies.has(request)) return undefined;
      const seconds = retryAfterSeconds(response);
      if (seconds === undefined) return undefined;
      await response.body?.cancel();
      return again(request, fetch, { waitMs: Math.min(seconds * 1000, maxWaitMs) });
    },
    async onError({ request, error, options: { fetch } }) {
      if (!copies.has(request) || !isNetworkFailure(error, request)) return undefined;
      return again(request, fetch, { waitMs: networkDelayMs(1) });
    },
  };
}

// ---- The client ---------------------------------------------------------------------------------

function typedByStatus<Paths extends {}>(client: Client<Paths>): TillgateClient<Paths> {
  const withStatus = <T extends { response: Response }>(result: T) => ({ ...result, status: result.response.status });
  const wrap =
    <Call extends (...args: any[]) => Promise<{ response: Response }>>(call: Call) =>
    (...args: Parameters<Call>) =>
      call(...args).then(withStatus);
  // The same openapi-fetch client (use, eject, request… unchanged); only the five methods' answers gain `status`.
  return Object.assign(client, {
    GET: wrap(client.GET),
    PUT: wrap(client.PUT),
    POST: wrap(client.POST),
    DELETE: wrap(client.DELETE),
    PATCH: wrap(client.PATCH),
  }) as unknown as TillgateClient<Paths>;
}

/** Both hosts' clients, sending `token`, with the middleware above. */
export function createTillgate(options: TillgateOptions): Tillgate {
  const make = <Paths extends {}>(baseUrl: string) => {
    const client = createClient<Paths>({ baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
    // onRequest runs in this order, onResponse and onError in the reverse: the retries see the
    // request with its token and answer first, then the empty answers are made readable.
    client.use(authentication(options.token), emptyAnswers, retrying(options.retry ?? {}));
    return typedByStatus(client);
  };
  return { core: make<CorePaths>(options.coreUrl), pos: make<PosPaths>(options.posUrl) };
}
