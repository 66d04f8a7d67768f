import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { HttpError, isTransientFault, serviceUnavailable, type Problem } from '#http/errors';
import { coreErrorBody } from '#http/hosts/core';
import { posErrorBody } from '#http/hosts/pos';
import { logger, recordRequestMetrics } from '#runtime/observability';
import { entityTag, etagMatches } from '#http/etags';
import { loggablePath } from '#http/loggable-path';
import { withOriginalStack } from '#runtime/original-stack';
import type { Reply } from '#http/reply';
import type { ApiMiddleware, ApiRequest } from '#http/request';
import type { Route } from '#functions/routes';

/**
 * Hand-written: no maintained middleware speaks two hosts' error envelopes, echoes a validated
 * X-Request-Id, or answers weak-ETag revalidation with 304. Every response leaves through here:
 * the handler's Reply or any error becomes the Lambda proxy result, one access-log line and
 * the request metrics.
 */
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const started = new WeakMap<object, number>();

export function hostResponse(route: Route): ApiMiddleware {
  const { operationId } = route;
  return {
    before: (request) => {
      started.set(request, performance.now());
      const raw = request.event as unknown as APIGatewayProxyEvent;
      const incoming = headerValue(raw, 'x-request-id');
      const gatewayId = raw.requestContext?.requestId;
      request.context.requestId = incoming && REQUEST_ID.test(incoming) ? incoming : gatewayId && REQUEST_ID.test(gatewayId) ? gatewayId : randomUUID();
    },
    after: (request) => {
      finish(request, request.response ?? { statusCode: 500 }, route);
    },
    onError: (request) => {
      const error = toHttpError(request.error);
      if (error.statusCode >= 500) {
        // The whole error, stack included (at its source positions), for on-call; the client sees
        // only a generic message.
        logger.error('request failed', { request_id: request.context.requestId, operation: operationId, error: withOriginalStack(request.error) });
      }
      finish(request, errorReply(route, error, request.context.requestId), route, error, request.error);
    },
  };
}

/** Before the header normalizer has run (or without it), a header by its name in any case. */
function headerValue(event: APIGatewayProxyEvent, lowerCaseName: string): string | undefined {
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (name.toLowerCase() === lowerCaseName && typeof value === 'string') return value;
  }
  return undefined;
}

function finish(request: ApiRequest, reply: Reply, route: Route, error?: HttpError, cause?: unknown) {
  const { operationId } = route;
  const latency = performance.now() - (started.get(request) ?? performance.now());
  const raw = request.event as unknown as APIGatewayProxyEvent;
  const result = toResult(route, reply, raw, request.context.requestId, latency, error?.retryAfterSeconds);
  // The handler's Reply becomes the Lambda proxy result here, and only here.
  (request as unknown as { response: APIGatewayProxyResult }).response = result;

  logger.info('request', {
    request_id: request.context.requestId,
    operation: operationId,
    method: raw.httpMethod,
    path: loggablePath(raw),
    status: result.statusCode,
    latency_ms: Math.round(latency * 100) / 100,
    account_id: request.context.accountId,
    source_ip: raw.requestContext?.identity?.sourceIp,
    ...(error ? { error_code: error.code } : {}),
    ...(error && error.statusCode >= 500 && cause instanceof Error ? { error_name: cause.name, error_message: cause.message } : {}),
  });
  recordRequestMetrics(operationId, result.statusCode, latency);
}

function toResult(
  route: Route,
  reply: Reply,
  event: APIGatewayProxyEvent,
  requestId: string,
  latencyMs: number,
  retryAfterSeconds: number | undefined,
): APIGatewayProxyResult {
  const body = reply.rawBody ?? reply.rawJson ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
  };
  if (reply.location) headers.Location = reply.location;
  if (reply.replayed) headers['Idempotent-Replayed'] = 'true';
  if (retryAfterSeconds !== undefined) headers['Retry-After'] = String(retryAfterSeconds);

  if (route.host === 'core') {
    // Like the original service: runtime in seconds, revalidated caching of reads, weak ETags.
    headers['X-Runtime'] = (latencyMs / 1000).toFixed(6);
    const cacheableRead = event.httpMethod === 'GET' && reply.statusCode === 200;
    if (cacheableRead) headers['Cache-Control'] = 'max-age=0, private, must-revalidate';
    // Only a successful JSON answer is a representation of the resource: an error's tag would be
    // taken for the resource's (an If-Match with it would fail with 412 for ever).
    if (reply.statusCode >= 200 && reply.statusCode < 300 && reply.rawBody === undefined && body !== '') {
      headers.ETag = entityTag(body, route.countInEtag);
      if (cacheableRead && etagMatches(event.headers?.['if-none-match'], headers.ETag)) {
        // RFC 9110 §15.4.5: a 304 carries the validators and caching fields, no representation metadata.
        delete headers['Content-Type'];
        return { statusCode: 304, headers, body: '' };
      }
    }
  }
  return { statusCode: reply.statusCode, headers, body };
}

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (isTransientFault(error)) return serviceUnavailable();
  return new HttpError(500, 'internal_error', [{ message: 'Internal server error' }]);
}

function errorReply(route: Route, error: HttpError, requestId: string): Reply {
  const problems: readonly Problem[] =
    error.code === 'internal_error' ? [{ message: `Internal server error; quote request id ${requestId} to support` }] : error.problems;
  const body =
    route.host === 'core'
      ? coreErrorBody(problems)
      : posErrorBody(route.till, error.code, problems, requestId, {
          ...(error.subject !== undefined ? { subject: error.subject } : {}),
          ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
        });
  return { statusCode: error.statusCode, body };
}
