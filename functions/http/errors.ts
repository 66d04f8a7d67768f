/**
 * Errors a handler or middleware throws. One error handler (the host-response middleware, middleware/host-response.ts) turns each into the
 * host's error body; a message is shown to the client only below 500.
 */
export interface Problem {
  readonly message: string;
  /** Dotted path of the one field at fault, e.g. `code_generator.code_length`. */
  readonly field?: string;
}

/** Stable machine-readable names, used as `message_id` on the pos host and in logs (and listed by the OpenAPI documents). */
export const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'site_not_allowed',
  'not_found',
  'conflict',
  'precondition_failed',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'too_many_unknown_codes',
  'service_unavailable',
  'internal_error',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    readonly problems: readonly Problem[],
    readonly retryAfterSeconds?: number,
    /** What the pos host's cashier text names beside the attempt: the site a bound till was refused at. */
    readonly subject?: string,
  ) {
    super(problems.map((p) => p.message).join('; '));
    this.name = 'HttpError';
  }
}

const single = (message: string, field?: string): Problem[] => [field !== undefined ? { message, field } : { message }];

export const badRequest = (message: string, field?: string) => new HttpError(400, 'bad_request', single(message, field));

/** Why a request is not authenticated: each answers 401 with a message naming that fault. */
export type UnauthorizedReason = 'missing' | 'ambiguous' | 'malformed' | 'unknown' | 'revoked';

const UNAUTHORIZED_MESSAGES: Record<UnauthorizedReason, string> = {
  missing: 'X-Auth-Token header is required',
  ambiguous: 'Send one X-Auth-Token header: this request carries several different ones',
  malformed: 'X-Auth-Token is malformed: a token is tg_ followed by 43 characters; check that it was copied whole',
  unknown: 'X-Auth-Token is not a known token; check it, or ask the operator for a token',
  revoked: 'X-Auth-Token was revoked; ask the operator for a new token',
};

export const unauthorized = (reason: UnauthorizedReason) => new HttpError(401, 'unauthorized', single(UNAUTHORIZED_MESSAGES[reason]));

/** A valid token outside its scope (or a key written before scopes, which has none). */
export const forbidden = (message: string) => new HttpError(403, 'forbidden', single(message));

/**
 * A till's token bound to sites (`create --scope pos --site …`) used for another site_id: 403,
 * the cashier text naming the site (docs/security.md, "Tills bound to their sites").
 */
export const siteNotAllowed = (siteId: string) =>
  new HttpError(
    403,
    'site_not_allowed',
    single(
      `This token is bound to other sites than ${JSON.stringify(siteId)}; use the token of a till of that site, or ask the operator to bind this one to it`,
    ),
    undefined,
    siteId,
  );

/**
 * Too many codes not found for this token within the window (docs/security.md, "No guessing
 * codes"): 429 with Retry-After, until enough of them are older than the window.
 */
export const tooManyUnknownCodes = (retryAfterSeconds: number, limit: number, windowSeconds: number) =>
  new HttpError(
    429,
    'too_many_unknown_codes',
    single(
      `Too many codes that do not exist were sent with this X-Auth-Token: more than ${limit} in ${windowSeconds} seconds; ` +
        'requests naming an unknown code are refused until the Retry-After delay has passed (requests whose codes all exist are still served)',
    ),
    retryAfterSeconds,
  );

export const notFound = (message = 'Not found') => new HttpError(404, 'not_found', single(message));

export const conflict = (message: string) => new HttpError(409, 'conflict', single(message));

export const preconditionFailed = (message: string) => new HttpError(412, 'precondition_failed', single(message));

export const payloadTooLarge = (limitBytes: number) => new HttpError(413, 'payload_too_large', single(`Request body exceeds ${limitBytes} bytes`));

export const unsupportedMediaType = (message = 'Content-Type must be application/json') => new HttpError(415, 'unsupported_media_type', single(message));

export const validationFailed = (problems: readonly Problem[]) => new HttpError(422, 'validation_failed', problems);

export const serviceUnavailable = (retryAfterSeconds = 1) =>
  new HttpError(503, 'service_unavailable', single('The service is temporarily unavailable; retry after the Retry-After delay'), retryAfterSeconds);

/**
 * Faults of the database, the network or a dependency that a retry can cure: they answer 503 with
 * Retry-After. Everything else that is not an HttpError is a bug and answers 500.
 */
const TRANSIENT_ERROR_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionConflictException',
  'TransactionInProgressException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  // The invocation's deadline passed (deadline.ts): a hung database, or work that ran too long.
  'DeadlineExceededError',
  // The customer key could not be read (runtime/customer-key.ts): Secrets Manager refused, or is
  // slow or unreachable. The till may retry; a refusal is for on-call to fix, not a bug.
  'CustomerKeyUnavailableError',
  // KMS refused, throttled or did not answer a data-key call (runtime/envelope.ts): on-call fixes a
  // refusal (the key disabled, a grant missing); a retry meets the key again.
  'KeyUnavailableError',
  // Likewise the cursor key (http/pagination.ts), read by the list routes.
  'CursorKeyUnavailableError',
]);

const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
]);

export function isTransientFault(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  if (e.name && TRANSIENT_ERROR_NAMES.has(e.name)) return true;
  if (e.code && TRANSIENT_NETWORK_CODES.has(e.code)) return true;
  const status = e.$metadata?.httpStatusCode;
  return status !== undefined && status >= 500;
}
