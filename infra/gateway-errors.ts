import { routes, type HostId } from '../functions/routes.ts';

/**
 * The answers API Gateway gives itself, without calling a function, rewritten to each host's
 * error shape. Plain data, without CDK: the stack turns each into a gateway response, and the
 * local server gives the same answers for the cases it stands in for (no route, body too large).
 */
export interface GatewayError {
  /** API Gateway's response type, e.g. MISSING_AUTHENTICATION_TOKEN. */
  readonly type: string;
  /** Omitted: keep API Gateway's status (the DEFAULT_* families). */
  readonly statusCode?: number;
  readonly message: string;
  readonly messageId: string;
  /** Extra response headers, as API Gateway mapping expressions (static values in quotes). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Placeholder replaced by API Gateway's own (already JSON-quoted) error message. */
const GATEWAY_MESSAGE = '$context.error.messageString';
const RAW_MESSAGE = '__GATEWAY_MESSAGE__';

export const gatewayErrors = [
  // A method and path outside the route table: API Gateway calls it a missing token (403).
  { type: 'MISSING_AUTHENTICATION_TOKEN', statusCode: 404, message: 'No route for this method and path', messageId: 'not_found' },
  {
    type: 'THROTTLED',
    statusCode: 429,
    message: 'Too many requests; retry after the Retry-After delay',
    messageId: 'throttled',
    headers: { 'Retry-After': "'1'" },
  },
  { type: 'REQUEST_TOO_LARGE', statusCode: 413, message: 'Request body is too large', messageId: 'payload_too_large' },
  { type: 'UNSUPPORTED_MEDIA_TYPE', statusCode: 415, message: 'Content-Type must be application/json', messageId: 'unsupported_media_type' },
  {
    type: 'INTEGRATION_TIMEOUT',
    statusCode: 504,
    message: 'The request timed out; request id $context.requestId',
    messageId: 'timeout',
  },
  { type: 'DEFAULT_4XX', message: RAW_MESSAGE, messageId: 'request_rejected' },
  { type: 'DEFAULT_5XX', message: 'Internal server error; request id $context.requestId', messageId: 'internal_error' },
] as const satisfies readonly GatewayError[];

export type GatewayErrorType = (typeof gatewayErrors)[number]['type'];

export function gatewayError(type: GatewayErrorType): GatewayError {
  return gatewayErrors.find((error) => error.type === type)!;
}

/**
 * The host's error body, as the functions write it, for a response API Gateway makes itself.
 * `requestId` is `$context.requestId` in the stack's templates and the real id locally; the pos
 * host's display message carries it, as a reference for support.
 */
export function gatewayErrorBody(hostId: HostId, message: string, messageId: string, requestId = '$context.requestId'): string {
  const body =
    hostId === 'pos'
      ? {
          transaction: {
            errors: [{ message }],
            display_messages: [{ message, message_id: messageId, message_content: { request_id: requestId }, priority: 1 }],
          },
        }
      : { errors: [{ message }] };
  return JSON.stringify(body).replaceAll(JSON.stringify(RAW_MESSAGE), GATEWAY_MESSAGE);
}

/**
 * 405: a known path with a method it does not serve. API Gateway answers it itself (an ANY method
 * with a mock integration on every resource of the route table: infra/constructs/host-api.ts),
 * the local server likewise; no function runs. `Allow` lists the methods the path serves.
 * Everything comes from the route table, so a new route's path gets it without a line here.
 */
export const METHOD_NOT_ALLOWED = {
  statusCode: 405,
  messageId: 'method_not_allowed',
  /** `$context.httpMethod` is the method as API Gateway received it. */
  message: (method: string, allow: readonly string[]) => `Method ${method} is not allowed on this path; it serves ${allow.join(', ')} (see the Allow header)`,
} as const;

/** Each resource path of a host that serves at least one route, with the methods it serves, sorted. */
export function methodsByPath(host: HostId): ReadonlyMap<string, readonly string[]> {
  const byPath = new Map<string, string[]>();
  for (const route of routes.filter((r) => r.host === host)) {
    const methods = byPath.get(route.path) ?? [];
    methods.push(route.method);
    byPath.set(route.path, methods);
  }
  return new Map([...byPath].map(([path, methods]) => [path, [...methods].sort()]));
}

/** An answer the stack's WAF web ACL gives (infra/constructs/token-rate-limit.ts), in each host's error shape. */
export interface WafAnswer {
  readonly statusCode: number;
  readonly messageId: string;
  readonly message: string;
  /** What the till's cashier reads (pos host). */
  readonly cashierMessage: string;
}

/**
 * 429 from the stack's WAF web ACL: this token is over its own limit (infra/constructs/
 * token-rate-limit.ts). WAF sends a fixed body (no request id: WAF has none to give), in the
 * host's error shape; `Retry-After` is the rule's evaluation window, the longest wait there can be.
 */
export const TOKEN_RATE_LIMITED = {
  statusCode: 429,
  messageId: 'token_rate_limited',
  message: 'Too many requests with this X-Auth-Token: it is over its own rate limit; retry after the Retry-After delay',
  cashierMessage: 'This till is sending too many requests. Wait a minute, then try again; nothing will be recorded twice.',
} as const satisfies WafAnswer;

/**
 * 429 from the stack's WAF web ACL: this source address is over a limit, either that of requests
 * without a well-formed X-Auth-Token or that of all its requests (docs/security.md).
 */
export const SOURCE_RATE_LIMITED = {
  statusCode: 429,
  messageId: 'source_rate_limited',
  message:
    'Too many requests from this network address (without a valid X-Auth-Token, or in all): it is over its rate limit; retry after the Retry-After delay',
  cashierMessage: 'The shop is sending too many requests. Wait a minute, then try again; nothing will be recorded twice.',
} as const satisfies WafAnswer;

/** The most headers, and header bytes, WAF can inspect whole (and the local server accepts). */
export const HEADER_LIMITS = { count: 200, bytes: 8192 } as const;

/**
 * 400 from the stack's WAF web ACL, and from the local server: the request's headers are more
 * numerous or larger than WAF can inspect whole, so a token among them could pass uncounted.
 * WAF cannot answer 431 (its custom responses offer no such status), so both answer 400.
 */
export const HEADERS_TOO_LARGE = {
  statusCode: 400,
  messageId: 'headers_too_large',
  message: `Request headers are too large: send at most ${HEADER_LIMITS.count} headers and ${HEADER_LIMITS.bytes} bytes of headers`,
  cashierMessage: "The till sent a request the service cannot read. Call support: the till's software must be fixed.",
} as const satisfies WafAnswer;

/** The fixed body of a WAF answer, in the host's error shape. */
export function wafAnswerBody(hostId: HostId, answer: WafAnswer): string {
  const { message, messageId, cashierMessage } = answer;
  return JSON.stringify(
    hostId === 'pos'
      ? { transaction: { errors: [{ message }], display_messages: [{ message: cashierMessage, message_id: messageId, message_content: {}, priority: 1 }] } }
      : { errors: [{ message }] },
  );
}
