import { hosts, routes, type HostId, type Route } from '../functions/routes.ts';
import { codeGeneratorSchema, MAX_BODY_BYTES, voidSchema } from '../functions/commons/requests.ts';
import { toJsonSchema } from '../functions/commons/validation.ts';

/**
 * The OpenAPI 3.1 description of both hosts, built from the route table and the request schemas
 * the handlers validate with, so it cannot drift from the code. `npm run openapi` writes it to
 * openapi/openapi.json; the tests check every response they receive against it.
 */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const header = (description: string, schema: object = { type: 'string' }, required = true) => ({ description, required, schema });

const commonHeaders = {
  'X-Request-Id': header('The request id: the incoming X-Request-Id when well-formed, else generated.'),
  'Content-Type': header('Always application/json; charset=utf-8.', { const: 'application/json; charset=utf-8' }),
  'X-Content-Type-Options': header('Always nosniff.', { const: 'nosniff' }),
  'Cache-Control': header('no-store, or max-age=0, private, must-revalidate on successful core reads.'),
};
const coreHeaders = {
  ...commonHeaders,
  'X-Runtime': header('Handler time in seconds.', { type: 'string', pattern: '^\\d+\\.\\d{6}$' }),
  ETag: header('Weak entity tag of the JSON body.', { type: 'string', pattern: '^W/"[0-9a-f]{32}"$' }, false),
};
const headersOf = (host: HostId) => (host === 'core' ? coreHeaders : commonHeaders);
/** A 304 carries no representation metadata (RFC 9110 §15.4.5): no Content-Type, no Content-Length. */
const { 'Content-Type': _contentType, ...notModifiedHeaders } = coreHeaders;

const errorDescriptions: Record<number, string> = {
  400: 'Malformed JSON, a body that is not valid UTF-8, wrong top-level shape, an invalid path id or Idempotency-Key.',
  401: 'X-Auth-Token missing, unknown or revoked.',
  404: "No such record, or another account's, or an expired event.",
  409: 'Idempotency-Key already used with a different body.',
  413: `Body over ${MAX_BODY_BYTES} bytes.`,
  415: 'A body with a non-JSON Content-Type.',
  422: 'Validation failed: one entry per problem.',
  500: 'A bug: a generic message with the request id.',
  503: 'The database is throttling or unreachable; retry after Retry-After seconds.',
};

/**
 * Answers API Gateway gives itself for any operation, in the host's error shape (the stack's
 * gateway responses): they carry the common headers (X-Request-Id is API Gateway's request id),
 * never the core host's X-Runtime or ETag.
 */
const gatewayDescriptions: Record<number, string> = {
  429: 'Answered by API Gateway: the stage is throttled (all callers together over throttleRateLimit/throttleBurstLimit). Retry after Retry-After seconds.',
  502: 'Answered by API Gateway: the function failed without an answer (a crash, or the Lambda timeout). The message quotes the request id.',
  504: "Answered by API Gateway: the function did not answer within API Gateway's 29 s integration timeout. The message quotes the request id.",
};
const GATEWAY_STATUSES = [429, 502, 504];

function gatewayErrorResponse(host: HostId, status: number) {
  return {
    description: gatewayDescriptions[status],
    headers: {
      ...commonHeaders,
      'Cache-Control': header('Always no-store.', { const: 'no-store' }),
      ...(status === 429 ? { 'Retry-After': header('Seconds to wait before retrying.', { type: 'string', pattern: '^\\d+$' }) } : {}),
    },
    content: { 'application/json': { schema: ref(host === 'core' ? 'CoreError' : 'PosError') } },
  };
}

function errorResponse(host: HostId, status: number) {
  return {
    description: errorDescriptions[status],
    headers: {
      ...headersOf(host),
      ...(status === 503 ? { 'Retry-After': header('Seconds to wait before retrying.', { type: 'string', pattern: '^\\d+$' }) } : {}),
    },
    content: { 'application/json': { schema: ref(host === 'core' ? 'CoreError' : 'PosError') } },
  };
}

interface Operation {
  readonly success: Record<string, object>;
  readonly errors: readonly number[];
  readonly requestBody?: object;
  readonly parameters?: readonly object[];
}

/**
 * A regular expression for the decimal numbers from 1 to `max`, written as the server reads them:
 * no sign, no leading zero, no exponent. For each digit of `max` that is above 0, the numbers of
 * that length sharing the digits before it and smaller at it; then `max` itself; then every
 * shorter length.
 */
export function positiveDecimalUpTo(max: number): string {
  const digits = String(max);
  const alternatives: string[] = [];
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]);
    const low = i === 0 ? 1 : 0;
    if (digit - 1 < low) continue;
    const range = digit - 1 === low ? String(low) : `[${low}-${digit - 1}]`;
    const rest = digits.length - i - 1;
    alternatives.push(`${digits.slice(0, i)}${range}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  alternatives.push(digits);
  if (digits.length > 1) alternatives.push(`[1-9]${digits.length > 2 ? `[0-9]{0,${digits.length - 2}}` : '[0-9]?'}`);
  return `^(?:${alternatives.join('|')})$`;
}

/**
 * The server accepts exactly ^[1-9][0-9]{0,15}$ up to 2^53-1 (positiveIntegerParameter in
 * functions/commons/api.ts). A path parameter arrives as text, and JSON Schema's `pattern` applies
 * to strings only: with `type: integer`, validating tools convert "01" to 1 and accept it. So the
 * schema is a string whose pattern is exactly the server's rule.
 */
const idParameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A positive integer in decimal, without sign or leading zeros, at most 9007199254740991 (2^53-1); anything else answers 400.',
  schema: { type: 'string', pattern: positiveDecimalUpTo(Number.MAX_SAFE_INTEGER), examples: ['1', '42'] },
};

const jsonBody = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });

const operations: Record<string, Operation> = {
  createCodeGenerator: {
    requestBody: jsonBody(toJsonSchema(codeGeneratorSchema)),
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Repeats with the same key and body return the first response; a different body answers 409. Kept 24 hours.',
        schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
      },
    ],
    success: {
      201: {
        description: 'Created, with the generator and its code_generator.created event.',
        headers: {
          ...coreHeaders,
          Location: header('/v1.0/codegen/{id}', { type: 'string', pattern: '^/v1\\.0/codegen/[1-9][0-9]*$' }),
          'Idempotent-Replayed': header('true when this is the stored answer to an earlier request.', { const: 'true' }, false),
        },
        content: { 'application/json': { schema: ref('CodeGeneratorResponse') } },
      },
    },
    errors: [400, 401, 409, 413, 415, 422, 500, 503],
  },
  getEvent: {
    parameters: [idParameter],
    success: {
      200: { description: 'The event.', headers: coreHeaders, content: { 'application/json': { schema: ref('EventResponse') } } },
      304: {
        description: 'Not modified: If-None-Match matched the ETag. No body, and no Content-Type or Content-Length (RFC 9110 §15.4.5).',
        headers: notModifiedHeaders,
      },
    },
    errors: [400, 401, 404, 500, 503],
  },
  deleteEvent: {
    parameters: [idParameter],
    success: {
      200: {
        description: 'Acknowledged and deleted. The body is a single space (one byte), as the original service answers.',
        headers: coreHeaders,
        'x-raw-body': ' ',
      },
    },
    errors: [400, 401, 404, 500, 503],
  },
  voidTransaction: {
    requestBody: jsonBody(toJsonSchema(voidSchema)),
    success: {
      200: {
        description:
          'Voided, with its transaction.voided event; or a repeat of an earlier void of the same account, site_id and pos_transaction_id, answered with the first body (Idempotent-Replayed: true) and writing nothing.',
        headers: {
          ...commonHeaders,
          'Idempotent-Replayed': header('true when this is the stored answer to an earlier void.', { const: 'true' }, false),
        },
        content: { 'application/json': { schema: ref('VoidResponse') } },
      },
    },
    errors: [400, 401, 413, 415, 422, 500, 503],
  },
};

/** The pos host's body, success or failure: `transaction` with `errors` and cashier messages. */
function transactionEnvelope(errors: object) {
  return {
    type: 'object',
    required: ['transaction'],
    additionalProperties: false,
    properties: {
      transaction: {
        type: 'object',
        additionalProperties: false,
        required: ['errors', 'display_messages'],
        properties: { errors, display_messages: { type: 'array', minItems: 1, items: ref('DisplayMessage') } },
      },
    },
  };
}

const schemas = {
  CodeGeneratorResponse: {
    type: 'object',
    required: ['code_generator'],
    additionalProperties: false,
    properties: {
      code_generator: {
        type: 'object',
        additionalProperties: false,
        required: ['generation_type', 'buffer_type', 'code_length', 'description', 'prefix', 'store_id', 'status', 'id', 'account_id', 'created_at', 'updated_at'],
        properties: {
          ...(toJsonSchema({ ...codeGeneratorSchema, readOnly: [] }) as any).properties.code_generator.properties,
          id: { type: 'integer', minimum: 1 },
          account_id: { type: 'integer', minimum: 1 },
          created_at: { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' },
          updated_at: { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' },
        },
      },
    },
  },
  EventResponse: {
    type: 'object',
    required: ['event'],
    additionalProperties: false,
    properties: {
      event: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'type', 'resource_id', 'created_at'],
        properties: {
          id: { type: 'integer', minimum: 1 },
          type: { enum: ['code_generator.created', 'transaction.voided'] },
          resource_id: { type: 'string', description: 'The generator id, or site_id/pos_transaction_id of a void.' },
          created_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
  DisplayMessage: {
    type: 'object',
    additionalProperties: false,
    required: ['message', 'message_id', 'message_content', 'priority'],
    properties: {
      message: { type: 'string', minLength: 1 },
      message_id: { type: 'string', minLength: 1 },
      message_content: { type: 'object' },
      priority: { type: 'integer' },
    },
  },
  VoidResponse: transactionEnvelope({ type: 'array', maxItems: 0 }),
  CoreError: {
    type: 'object',
    required: ['errors'],
    additionalProperties: false,
    properties: {
      errors: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['message'],
          properties: { message: { type: 'string', minLength: 1 }, field: { type: 'string', minLength: 1 } },
        },
      },
    },
  },
  PosError: transactionEnvelope({
    type: 'array',
    minItems: 1,
    items: { type: 'object', additionalProperties: false, required: ['message'], properties: { message: { type: 'string', minLength: 1 } } },
  }),
};

function pathItemOperation(route: Route) {
  const operation = operations[route.operationId];
  if (!operation) throw new Error(`No OpenAPI description for ${route.operationId}`);
  const responses: Record<string, object> = { ...operation.success };
  for (const status of operation.errors) responses[String(status)] = errorResponse(route.host, status);
  for (const status of GATEWAY_STATUSES) responses[String(status)] = gatewayErrorResponse(route.host, status);
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.host],
    ...(operation.parameters ? { parameters: operation.parameters } : {}),
    ...(operation.requestBody ? { requestBody: operation.requestBody } : {}),
    responses,
  };
}

export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const host = hosts[route.host];
    paths[route.path] ??= {
      servers: [
        { url: `{${route.host === 'core' ? 'base_url' : 'pos_base_url'}}`, variables: { [route.host === 'core' ? 'base_url' : 'pos_base_url']: { default: `http://127.0.0.1:${host.localPort}` } } },
      ],
    };
    paths[route.path]![route.method.toLowerCase()] = pathItemOperation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'tillgate',
      version: '1.0.0',
      description:
        'Two hosts: core ({base_url}, /v1.0) for code generators and event records, pos ({pos_base_url}, /v2.0) for voided transactions. Unknown routes answer 404, throttled requests 429, and API Gateway answers 502 (function failed) or 504 (integration timeout) itself, all in the host error shape.',
    },
    tags: Object.values(hosts).map((host) => ({ name: host.id, description: host.description })),
    security: [{ token: [] }],
    paths,
    components: {
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'X-Auth-Token', description: 'A token issued by the token tool, bound to one account.' },
      },
      schemas,
    },
  };
}
