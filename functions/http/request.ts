import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { HostId } from '../routes.ts';
import type { Reply } from './reply.ts';
import type { GeneratedSchema } from './validation.ts';

/**
 * The request side of the chain: the event and context a handler receives, and the options a
 * route's chain is built from. The middlewares and the chain both import these; nothing here
 * imports them back.
 */

export interface ParameterOptions {
  /** The route's compiled schemas (schemas/<name>.generated.ts). */
  readonly path?: GeneratedSchema;
  readonly query?: GeneratedSchema;
}

export interface BodyOptions {
  /** The one top-level key holding the resource, e.g. `code_generator`. */
  readonly root?: string;
  /** The route's compiled body schema (schemas/<name>.generated.ts). */
  readonly schema: GeneratedSchema;
  /** POS agents of many versions: `null` means absent and unknown keys are dropped. */
  readonly lenient?: boolean;
  /** The body may be left out (an action with nothing to say: `{}` or no body at all). */
  readonly optional?: boolean;
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
}

export interface ApiOptions extends ParameterOptions {
  readonly host: HostId;
  readonly operationId: string;
  /** The request body; routes without one ignore any body. */
  readonly body?: BodyOptions;
}

export type ApiRequest = Request<ApiEvent<any, any, any>, Reply, Error, ApiContext>;
export type ApiMiddleware = MiddlewareObj<ApiEvent<any, any, any>, Reply, Error, ApiContext>;
