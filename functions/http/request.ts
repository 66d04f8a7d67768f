import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { HostId, RouteBody } from '../routes.ts';
import type { Reply } from './reply.ts';
import type { BodyRules, GeneratedSchema } from './validation.ts';

/**
 * The request side of the chain: the event and context a handler receives, and the options a
 * route's chain is built from. The middlewares and the chain both import these; nothing here
 * imports them back.
 */

export interface ParameterOptions {
  /** The route's compiled schemas (schemas/<name>.generated.ts), those its row names. */
  readonly params?: GeneratedSchema;
  readonly query?: GeneratedSchema;
}

/** The route's body as its row declares it, with the compiled schema the handler passed. */
export interface BodyOptions extends Omit<RouteBody, 'schema'> {
  /** The route's compiled body schema (schemas/<name>.generated.ts). */
  readonly schema: GeneratedSchema;
  /** What the schema cannot say, checked with it (validation.ts). */
  readonly rules?: BodyRules;
}

export type ApiEvent<Body = null, Params = null, Query = null> = Omit<APIGatewayProxyEvent, 'body' | 'headers'> & {
  /** The validated resource (e.g. the object under `code_generator`). */
  body: Body;
  /** Validated path parameters; positive integers are numbers. */
  params: Params;
  /** Validated query parameters. */
  query: Query;
  /** Request headers with lower-case names. */
  headers: Record<string, string>;
};

export interface ApiContext extends Context {
  requestId: string;
  accountId: number;
  /** The caller's key (its public handle, never the token): per-token limits count by it. */
  keyId: string;
  /** The sites a bound till's token serves (exactly); undefined: every site. */
  sites: readonly string[] | undefined;
}

/**
 * What a handler gives `api()`: its operation, its host and the compiled validators of its row
 * (each handler imports its own, so its bundle carries no other route's). `api()` checks them
 * against the row in functions/routes.ts, which declares everything else.
 */
export interface ApiOptions extends ParameterOptions {
  readonly host: HostId;
  readonly operationId: string;
  /** The compiled schema of the request body the row declares. */
  readonly body?: GeneratedSchema;
  /**
   * The body's rules the schema cannot state, run with it so that one 422 lists every problem of
   * the body (validation.ts, BodyRules).
   */
  readonly bodyRules?: BodyRules;
}

export type ApiRequest = Request<ApiEvent<any, any, any>, Reply, Error, ApiContext>;
export type ApiMiddleware = MiddlewareObj<ApiEvent<any, any, any>, Reply, Error, ApiContext>;
