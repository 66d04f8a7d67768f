import middy, { type MiddlewareObj, type Request } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpSecurityHeaders from '@middy/http-security-headers';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { deadlinePlugin } from './deadline.ts';
import { authentication } from './middleware/authentication.ts';
import { hostResponse } from './middleware/host-response.ts';
import { jsonBody, type BodyOptions } from './middleware/json-body.ts';
import { parameters, type ParameterOptions } from './middleware/parameters.ts';
import { logger, metrics } from './observability.ts';
import { routes, type HostId } from '../routes.ts';

/**
 * The middleware chain every handler runs in, middleware first and handler last:
 *   Lambda context on log lines → metrics flush → security headers → host response
 *   (request id, envelopes, ETag/304, access log) → token and its scope → header names → path and
 *   query → JSON body → handler.
 * Handlers throw HttpErrors and return a Reply; only the host-response middleware builds status
 * lines, headers and error bodies, so both hosts answer the same way from every route.
 */

/** What a handler returns: data, never headers. */
export interface Reply {
  readonly statusCode: number;
  readonly body?: unknown;
  /** A JSON body already encoded (a stored first response), sent byte for byte. */
  readonly rawJson?: string;
  /** A body that is not JSON, sent as is (the one-byte DELETE answer). */
  readonly rawBody?: string;
  readonly location?: string;
  /** The answer of an earlier identical request, sent again. */
  readonly replayed?: boolean;
}

export const ok = (body: unknown): Reply => ({ statusCode: 200, body });
export const created = (location: string, body: unknown): Reply => ({ statusCode: 201, body, location });
/** The original service answers an acknowledged DELETE with a single space. */
export const acknowledged = (): Reply => ({ statusCode: 200, rawBody: ' ' });

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

/** An API answers JSON to machines: of helmet's headers only those that mean something here. */
const securityHeaders = {
  contentSecurityPolicy: false,
  crossOriginEmbedderPolicy: false,
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: false,
  dnsPrefetchControl: false,
  downloadOptions: false,
  originAgentCluster: false,
  permissionsPolicy: false,
  permittedCrossDomainPolicies: false,
  reportTo: false,
  reportingEndpoints: false,
  xssProtection: false,
  frameOptions: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true, preload: false },
  contentTypeOptions: { action: 'nosniff' },
} as const;

export function api<Body = null, Params = null, Query = null>(options: ApiOptions) {
  // The scope a route needs is declared once, in its row of the route table; a handler without a
  // row (or on another host than its row) fails at load, not on a request.
  const route = routes.find((r) => r.operationId === options.operationId);
  if (!route || route.host !== options.host) throw new Error(`No ${options.host} route ${options.operationId} in functions/routes.ts`);
  // Every request answers (503 at worst) before the Lambda timeout: see deadline.ts.
  const chain = middy<ApiEvent<Body, Params, Query>, Reply, Error, ApiContext>(deadlinePlugin)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    // Registered before hostResponse, so their `after` runs after it: the metrics it records are
    // flushed, and the security headers land on the response it built.
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .use(httpSecurityHeaders(securityHeaders as never))
    .use(hostResponse(options))
    .use(authentication({ scope: route.scope }))
    .use(httpHeaderNormalizer())
    .use(parameters(options));
  return options.body ? chain.use(jsonBody(options.body)) : chain;
}
