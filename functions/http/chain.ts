import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpSecurityHeaders from '@middy/http-security-headers';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { deadlinePlugin } from '#runtime/deadline';
import { authentication } from '#http/middleware/authentication';
import { hostResponse } from '#http/middleware/host-response';
import { jsonBody } from '#http/middleware/json-body';
import { parameters } from '#http/middleware/parameters';
import type { ApiContext, ApiEvent, ApiOptions } from './request.ts';
import type { Reply } from './reply.ts';
import { logger, metrics } from '#runtime/observability';
import { routes } from '#functions/routes';

/**
 * The middleware chain every handler runs in, middleware first and handler last:
 *   Lambda context on log lines → metrics flush → security headers → host response
 *   (request id, envelopes, ETag/304, access log) → token and its scope → header names → path and
 *   query → JSON body → handler.
 * Handlers throw HttpErrors and return a Reply; only the host-response middleware builds status
 * lines, headers and error bodies, so both hosts answer the same way from every route.
 */

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
