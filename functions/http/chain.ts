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
import { siteBinding } from '#http/middleware/site-binding';
import type { ApiContext, ApiEvent, ApiOptions } from './request.ts';
import type { Reply } from './reply.ts';
import { logger, metrics } from '#runtime/observability';
import { securityHeaders } from './security-headers.ts';
import { routes, type Route } from '#functions/routes';

/**
 * The middleware chain every handler runs in, middleware first and handler last:
 *   Lambda context on log lines → metrics flush → security headers → host response
 *   (request id, envelopes, ETag/304, access log) → token and its scope → header names → path and
 *   query → JSON body → (pos) the till's site against its token's sites → handler.
 * Handlers throw HttpErrors and return a Reply; only the host-response middleware builds status
 * lines, headers and error bodies, so both hosts answer the same way from every route.
 */

export function api<Body = null, Params = null, Query = null>(options: ApiOptions) {
  // What a route accepts is declared once, in its row of the route table; a handler without a
  // row, or whose host or validators are not its row's, fails at load, not on a request.
  const route = rowOf(options);
  // Every request answers (503 at worst) before the Lambda timeout: see deadline.ts.
  const chain = middy<ApiEvent<Body, Params, Query>, Reply, Error, ApiContext>(deadlinePlugin)
    // Never the event, whatever POWERTOOLS_LOGGER_LOG_EVENT says: it holds the token, and the body
    // with its codes and customer ids (docs/security.md, "What is never logged").
    .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
    // Registered before hostResponse, so their `after` runs after it: the metrics it records are
    // flushed, and the security headers land on the response it built.
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .use(httpSecurityHeaders(securityHeaders as never))
    .use(hostResponse(route))
    .use(authentication({ scope: route.scope }))
    .use(httpHeaderNormalizer())
    .use(parameters(options));
  const withBody = route.body && options.body ? chain.use(jsonBody({ ...route.body, schema: options.body, rules: options.bodyRules })) : chain;
  // Every pos route is a till's, for one site_id of its body (functions/routes.ts).
  return route.host === 'pos' ? withBody.use(siteBinding()) : withBody;
}

/**
 * The row of `options.operationId`, once the handler's host and compiled validators are found to
 * be the ones it declares (each generated module carries the name of its schema).
 */
function rowOf(options: ApiOptions): Route {
  const { operationId } = options;
  const route = routes.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`No route ${operationId} in functions/routes.ts`);
  const declared = { host: route.host, body: route.body?.schema, params: route.params, query: route.query };
  const passed = { host: options.host, body: options.body?.name, params: options.params?.name, query: options.query?.name };
  const mismatches = (Object.keys(declared) as (keyof typeof declared)[])
    .filter((part) => declared[part] !== passed[part])
    .map((part) => `${part}: the row says ${declared[part] ?? 'none'}, the handler passes ${passed[part] ?? 'none'}`);
  if (mismatches.length > 0) throw new Error(`${operationId} does not match its row in functions/routes.ts: ${mismatches.join('; ')}`);
  return route;
}
