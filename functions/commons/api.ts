import { createHash, randomUUID } from 'node:crypto';
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { accountForToken } from './auth.ts';
import {
  HttpError,
  badRequest,
  isTransientFault,
  payloadTooLarge,
  serviceUnavailable,
  unauthorized,
  unsupportedMediaType,
  validationFailed,
  type Problem,
} from './errors.ts';
import { logger, recordRequestMetrics } from './observability.ts';
// Reliability II: the invocation deadline (deadline.ts) and the body as bytes (body-bytes.ts).
import { deadlinePlugin } from './deadline.ts';
import { decodeUtf8Body, requestBodyBytes } from './body-bytes.ts';
import { MAX_BODY_BYTES } from './requests.ts';
import { hasTopLevelShape, validateResource, type BodySchema } from './validation.ts';
import type { HostId } from '../routes.ts';

/**
 * The middleware chain every handler runs in:
 *   request id → token check → JSON body → validation → handler → response shaping.
 * Handlers throw HttpErrors and return a Reply; only this module builds status lines,
 * headers and error bodies, so both hosts answer the same way from every route.
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

export type ApiEvent<Body = null> = Omit<APIGatewayProxyEvent, 'body' | 'headers'> & {
  /** The validated resource (e.g. the object under `code_generator`). */
  body: Body;
  /** Request headers with lower-case names. */
  headers: Record<string, string>;
};

export interface ApiContext extends Context {
  requestId: string;
  accountId: number;
}

interface ApiOptions {
  readonly host: HostId;
  readonly operationId: string;
  /** The request body's schema; routes without one ignore any body. */
  readonly body?: BodySchema;
}

export function api<Body = null>(options: ApiOptions) {
  // Reliability II: every request answers (503 at worst) before the Lambda timeout; see deadline.ts.
  const chain = middy<ApiEvent<Body>, Reply, Error, ApiContext>(deadlinePlugin)
    .use(httpResponse(options))
    .use(authentication());
  return options.body ? chain.use(jsonBody(options.body)) : chain;
}

type ApiRequest = Request<ApiEvent<unknown>, Reply, Error, ApiContext>;
type ApiMiddleware = MiddlewareObj<ApiEvent<unknown>, Reply, Error, ApiContext>;

// ---------------------------------------------------------------- request id, responses, logs

const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Per-request state kept by the chain, out of the handler's sight. */
const started = new WeakMap<object, number>();

function httpResponse({ host, operationId }: ApiOptions): ApiMiddleware {
  return {
    before: (request) => {
      started.set(request, performance.now());
      // cold_start, function_request_id, function_name … on every line of this request.
      logger.addContext(request.context);
      const raw = request.event as unknown as APIGatewayProxyEvent;
      request.event.headers = lowerCaseHeaders(raw);
      const incoming = request.event.headers['x-request-id'];
      const gatewayId = raw.requestContext?.requestId;
      request.context.requestId =
        incoming && REQUEST_ID.test(incoming)
          ? incoming
          : gatewayId && REQUEST_ID.test(gatewayId)
            ? gatewayId
            : randomUUID();
    },
    after: (request) => {
      finish(request, request.response ?? { statusCode: 500 }, undefined, host, operationId);
    },
    onError: (request) => {
      const error = toHttpError(request.error);
      if (error.statusCode >= 500) {
        // The whole error, stack included, for on-call; the client sees only a generic message.
        logger.error('request failed', { request_id: request.context.requestId, operation: operationId, error: request.error });
      }
      finish(request, errorReply(host, error, request.context.requestId), error, host, operationId, request.error);
    },
  };
}

function finish(
  request: ApiRequest,
  reply: Reply,
  error: HttpError | undefined,
  host: HostId,
  operationId: string,
  cause?: unknown,
) {
  const latency = performance.now() - (started.get(request) ?? performance.now());
  const event = request.event;
  const result = toResult(host, reply, event, request.context.requestId, latency, error?.retryAfterSeconds);
  // The handler's Reply becomes the Lambda proxy result here, and only here.
  (request as unknown as { response: APIGatewayProxyResult }).response = result;

  const raw = event as unknown as APIGatewayProxyEvent;
  logger.info('request', {
    request_id: request.context.requestId,
    operation: operationId,
    method: raw.httpMethod,
    path: raw.path,
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
  host: HostId,
  reply: Reply,
  event: ApiEvent<unknown>,
  requestId: string,
  latencyMs: number,
  retryAfterSeconds: number | undefined,
): APIGatewayProxyResult {
  const body = reply.rawBody ?? reply.rawJson ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  const method = (event as unknown as APIGatewayProxyEvent).httpMethod;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json; charset=utf-8',
    'X-Request-Id': requestId,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  };
  if (reply.location) headers.Location = reply.location;
  if (reply.replayed) headers['Idempotent-Replayed'] = 'true';
  if (retryAfterSeconds !== undefined) headers['Retry-After'] = String(retryAfterSeconds);

  if (host === 'core') {
    // Like the original service: runtime in seconds, revalidated caching of reads, weak ETags.
    headers['X-Runtime'] = (latencyMs / 1000).toFixed(6);
    const cacheableRead = method === 'GET' && reply.statusCode === 200;
    if (cacheableRead) headers['Cache-Control'] = 'max-age=0, private, must-revalidate';
    if (reply.rawBody === undefined && body !== '') {
      headers.ETag = `W/"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
      if (cacheableRead && etagMatches(event.headers['if-none-match'], headers.ETag)) {
        // Reliability II: a 304 carries no representation metadata (RFC 9110 §15.4.5).
        delete headers['Content-Type'];
        return { statusCode: 304, headers, body: '' };
      }
    }
  }
  return { statusCode: reply.statusCode, headers, body };
}

/** Weak comparison (RFC 9110 §13.1.2): `W/"x"` matches `"x"`; `*` matches anything. */
function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((candidate) => candidate.trim() === '*' || opaque(candidate) === opaque(etag));
}

function lowerCaseHeaders(event: APIGatewayProxyEvent): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
  }
  return headers;
}

// ---------------------------------------------------------------- errors

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (isTransientFault(error)) return serviceUnavailable();
  return new HttpError(500, 'internal_error', [{ message: 'Internal server error' }]);
}

function errorReply(host: HostId, error: HttpError, requestId: string): Reply {
  const problems: Problem[] =
    error.code === 'internal_error'
      ? [{ message: `Internal server error; quote request id ${requestId} to support` }]
      : [...error.problems];
  if (host === 'core') {
    return { statusCode: error.statusCode, body: { errors: problems.map(({ message, field }) => (field ? { message, field } : { message })) } };
  }
  return {
    statusCode: error.statusCode,
    body: {
      transaction: {
        errors: problems.map(({ message }) => ({ message })),
        display_messages: [cashierMessage(error, problems, requestId)],
      },
    },
  };
}

/** What the till shows: something a cashier can act on, never internals. */
function cashierMessage(error: HttpError, problems: readonly Problem[], requestId: string) {
  const messages: Record<HttpError['code'], string> = {
    unauthorized: 'This till is not authorised to void transactions. Ask a manager to check the till\'s API token.',
    validation_failed: `Void not accepted: ${problems.map((p) => p.message).join('; ')}. Check the transaction and try again.`,
    service_unavailable: 'Voiding is temporarily unavailable. Wait a moment and try again; the void will not be recorded twice.',
    bad_request: 'The till sent a request the service cannot read. Try again; if it keeps failing, call support.',
    payload_too_large: 'The till sent a request the service cannot read. Try again; if it keeps failing, call support.',
    unsupported_media_type: 'The till sent a request the service cannot read. Try again; if it keeps failing, call support.',
    not_found: 'The till asked for something the service does not offer. Call support.',
    conflict: 'This void conflicts with an earlier one. Call a supervisor.',
    internal_error: `Something went wrong while voiding. Try again; if it keeps failing, call support with reference ${requestId}.`,
  };
  return {
    message: messages[error.code],
    message_id: error.code,
    message_content: { request_id: requestId },
    priority: 1,
  };
}

// ---------------------------------------------------------------- token check

function authentication(): ApiMiddleware {
  return {
    before: async (request) => {
      const raw = request.event as unknown as APIGatewayProxyEvent;
      // Two different tokens in one request is ambiguous: refuse rather than pick one.
      // Header names are case-insensitive: `X-Auth-Token` and `x-auth-token` are the same header.
      const sent = Object.entries(raw.multiValueHeaders ?? {})
        .filter(([name]) => name.toLowerCase() === 'x-auth-token')
        .flatMap(([, values]) => values ?? []);
      if (new Set(sent).size > 1) throw unauthorized();
      const accountId = await accountForToken(request.event.headers['x-auth-token']);
      if (accountId === undefined) throw unauthorized();
      request.context.accountId = accountId;
    },
  };
}

// ---------------------------------------------------------------- JSON body

function jsonBody(schema: BodySchema): ApiMiddleware {
  return {
    before: (request) => {
      const raw = request.event as unknown as APIGatewayProxyEvent;
      // Size first, so an oversized body is refused before any work is spent on it.
      // Reliability II: bytes as received, not after a lossy decoding (body-bytes.ts).
      const received = requestBodyBytes(raw);
      if (received.length > MAX_BODY_BYTES) throw payloadTooLarge(MAX_BODY_BYTES);
      const contentType = request.event.headers['content-type'];
      if (contentType !== undefined && !isJsonMediaType(contentType)) throw unsupportedMediaType();
      const decoded = decodeUtf8Body(received); // Reliability II: 400 when not UTF-8
      if (decoded.trim() === '') throw badRequest(`Request body is required: a JSON object with a "${schema.root}" object`);

      let parsed: unknown;
      try {
        parsed = JSON.parse(decoded);
      } catch {
        throw badRequest('Request body is not valid JSON');
      }
      if (!hasTopLevelShape(parsed, schema.root)) {
        throw badRequest(`Request body must be a JSON object with a "${schema.root}" object`, schema.root);
      }
      const result = validateResource(schema, parsed[schema.root]!);
      if (!result.ok) throw validationFailed(result.problems);
      request.event.body = result.value;
    },
  };
}

/** application/json or any +json type; a charset, if given, must be UTF-8. */
function isJsonMediaType(header: string): boolean {
  const [type = '', ...parameters] = header.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  // RFC 9110 forbids spaces around "=", but be strict about what we accept, not about the syntax.
  const charset = parameters
    .map((parameter) => parameter.split('=').map((part) => part.trim().replace(/^"|"$/g, '')))
    .find(([name]) => name === 'charset')?.[1];
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

// ---------------------------------------------------------------- path parameters

/** A path id is a positive integer within JavaScript's exact range; anything else is a 400. */
export function positiveIntegerParameter(event: ApiEvent<unknown>, name: string): number {
  const text = event.pathParameters?.[name] ?? '';
  const value = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) throw badRequest(`${name} must be a positive integer`, name);
  return value;
}
