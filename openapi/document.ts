import { hosts, routes, type EtagCount, type HostId, type Route } from '../functions/routes.ts';
import { codeGeneratorCreate, MAX_BODY_BYTES, requestSchemas, webhookEndpointCreate, type SchemaName } from '../functions/http/schemas.ts';
import { EVENT_TYPES } from '../functions/data/event-types.ts';
import { MAX_HELD_CODES } from '../functions/tables.ts';
import {
  gatewayError,
  gatewayErrorBody,
  gatewayErrors,
  METHOD_NOT_ALLOWED,
  methodsByPath,
  TOKEN_RATE_LIMITED,
  SOURCE_RATE_LIMITED,
  HEADERS_TOO_LARGE,
  HEADER_LIMITS,
  type GatewayErrorType,
} from '../infra/gateway-errors.ts';
import { ERROR_CODES } from '../functions/http/errors.ts';
import { MAX_IF_MATCH_LENGTH } from '../functions/http/limits.ts';
import { coreErrorBody } from '../functions/http/hosts/core.ts';
import { posErrorBody } from '../functions/http/hosts/pos.ts';

/**
 * The OpenAPI 3.1 description of each host, built from the route table and the request schemas
 * the handlers validate with, so it cannot drift from the code: each operation's parameters,
 * request body and error statuses come from its row (functions/routes.ts); what is written here
 * is what a row cannot say, the success answers and what an error means for one operation. `npm run openapi` writes
 * openapi/core.json and openapi/pos.json; the tests check every response they receive against
 * them, and a real response of the test suite is each response's example (examples.ts).
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
/**
 * The ETag of an answer whose row names a count that moves on its own (functions/routes.ts,
 * countInEtag; functions/http/etags.ts): in two parts.
 */
const countedEtagHeader = (count: EtagCount) =>
  header(
    `Weak entity tag in two parts, W/"<hash>.<${count.field}>": the hash of the JSON body without ${count.root}.${count.field}, then that count. ` +
      `If-None-Match compares it whole (304 only when nothing in the body changed, ${count.field} included); If-Match compares the hash only, ` +
      `so a ${count.field} that moved since the tag was read fails no PATCH.`,
    { type: 'string', pattern: '^W/"[0-9a-f]{32}\\.(0|[1-9][0-9]*)"$' },
    false,
  );
/** An error carries no ETag (PRODUCT.md: a client must not mistake an error's tag for the resource's). */
const { ETag: _etag, ...coreErrorHeaders } = coreHeaders;
const errorHeadersOf = (host: HostId) => (host === 'core' ? coreErrorHeaders : commonHeaders);
/** A 304 carries no representation metadata (RFC 9110 §15.4.5): no Content-Type, no Content-Length. */
const { 'Content-Type': _contentType, ...notModifiedHeaders } = coreHeaders;

const errorDescriptions: Record<number, string> = {
  401: 'X-Auth-Token missing, malformed, unknown or revoked; the message says which.',
  403: 'A valid token outside its scope (see x-tillgate-scope), or a token issued before scopes existed, which has none. Checked right after the token: nothing else of the request is read.',
  404: "No such record, or another account's, or an expired event.",
  412: 'If-Match does not match the current ETag: nothing changed.',
  413: `Body over ${MAX_BODY_BYTES} bytes.`,
  415: 'A body with a non-JSON Content-Type.',
  422: 'Validation failed: one entry per problem.',
  500: 'A bug: a generic message with the request id.',
};

/**
 * Answers API Gateway gives itself for any operation, in the host's error shape (the stack's
 * gateway responses): they carry the common headers (X-Request-Id is API Gateway's request id),
 * never the core host's X-Runtime or ETag.
 */
const gatewayDescriptions: Record<number, string> = {
  429:
    'Answered by API Gateway: the stage is throttled (all callers together over throttleRateLimit/throttleBurstLimit); or by the ' +
    "stack's WAF web ACL: this token is over its own limit (tokenRateLimit requests per tokenRateLimitWindowSeconds), or this source " +
    'address is (tokenlessRateLimit requests without a well-formed token, sourceRateLimit in all, per window). Retry after ' +
    "Retry-After seconds. The WAF answer has this body too, but WAF's own Content-Type (application/json, no charset) and no X-Request-Id.",
  502: 'Answered by API Gateway: the function failed without an answer (a crash, or the Lambda timeout). The message quotes the request id.',
  504: "Answered by API Gateway: the function did not answer within API Gateway's 29 s integration timeout. The message quotes the request id.",
};
const GATEWAY_STATUSES = [429, 502, 504];

/** What API Gateway itself answers, rendered from the stack's own templates (infra/gateway-errors.ts). */
const gatewayTypes: Record<number, GatewayErrorType> = { 429: 'THROTTLED', 502: 'DEFAULT_5XX', 504: 'INTEGRATION_TIMEOUT' };
function gatewayExample(host: HostId, status: number) {
  const error = gatewayError(gatewayTypes[status]!);
  const requestId = '5f1d3a34-6c2e-4a5b-9d0e-2b7f8c9a1e42';
  const value = JSON.parse(gatewayErrorBody(host, error.message.replace('$context.requestId', requestId), error.messageId, requestId));
  return { fromTemplate: { summary: 'As the stage renders it (infra/gateway-errors.ts)', value } };
}

function gatewayErrorResponse(host: HostId, status: number, operationNote?: string) {
  return {
    description: operationNote ? `${gatewayDescriptions[status]} ${operationNote}` : gatewayDescriptions[status],
    headers: {
      ...commonHeaders,
      'Cache-Control': header('Always no-store.', { const: 'no-store' }),
      ...(status === 429
        ? {
            'Retry-After': header('Seconds to wait before retrying.', { type: 'string', pattern: '^\\d+$' }),
            // The per-token limit's answer comes from WAF, which sets its own Content-Type and has no request id.
            'X-Request-Id': header("API Gateway's request id; absent on the per-token limit's answer (WAF has none).", { type: 'string' }, false),
            'Content-Type': header("application/json; charset=utf-8, or application/json on the per-token limit's answer (set by WAF).", {
              enum: ['application/json; charset=utf-8', 'application/json'],
            }),
          }
        : {}),
    },
    content: {
      'application/json': {
        schema: ref(host === 'core' ? 'CoreError' : status === 429 ? 'PosThrottled' : 'PosError'),
        examples: gatewayExample(host, status),
      },
    },
  };
}

/**
 * What a 400 or a 409 means for one operation, from the facts of its row: only what this
 * operation reads can be malformed, and only a key it takes can be reused.
 */
function rowDescription(route: Route, status: number): string | undefined {
  if (status === 400) {
    const faults = [
      ...(route.body
        ? [
            `malformed JSON, a body that is not valid UTF-8, or a body that is not a JSON object${route.body.root ? ` holding a ${route.body.root} object (a missing ${route.body.root} is this 400, not a 422)` : ''}`,
          ]
        : []),
      ...(route.params
        ? [
            `a path ${Object.keys(requestSchemas[route.params].properties)
              .filter((name) => name !== 'code')
              .join(' or ')} that is not a positive integer`,
          ]
        : []),
      ...(route.query ? ['a query parameter of the wrong form, or one this operation does not take'] : []),
      ...(route.ifMatch ? ['an If-Match that is not entity tags'] : []),
      ...(route.idempotencyKey ? ['an Idempotency-Key that is not 1–255 visible ASCII characters'] : []),
    ];
    return `${faults.join('; ').replace(/^./, (first) => first.toUpperCase())}.`;
  }
  if (status === 403 && route.host === 'pos') {
    return (
      `${errorDescriptions[403]} Or a till's token bound to sites (npm run tokens -- create --scope pos --site …) sent for another ` +
      'site_id (compared exactly): message_id site_not_allowed, the cashier text naming the site; checked once the body is valid, before anything is read or written.'
    );
  }
  if (status === 409 && route.idempotencyKey) return 'The Idempotency-Key was already used with a different body: nothing was done.';
  if (status === 503) {
    const unavailable = 'The database is throttling, unreachable or did not answer in time; retry after Retry-After seconds.';
    if (route.method === 'GET') return unavailable;
    if (route.host === 'pos')
      return `${unavailable} The write may have been applied: repeat it as it was (keyed by its transaction, a repeat does nothing twice).`;
    if (route.idempotencyKey) {
      return `${unavailable} The write may have been applied: repeat it with the same Idempotency-Key (the first answer comes back, nothing is done twice).`;
    }
    return `${unavailable} The change may have been applied: repeated, it leaves the same end state.`;
  }
  return undefined;
}

function errorResponse(route: Route, status: number, operation: Operation) {
  const host = route.host;
  return {
    description: operation.errorDescriptions?.[status] ?? rowDescription(route, status) ?? errorDescriptions[status],
    headers: {
      ...errorHeadersOf(host),
      ...(status === 503 ? { 'Retry-After': header('Seconds to wait before retrying.', { type: 'string', pattern: '^\\d+$' }) } : {}),
    },
    content: { 'application/json': { schema: ref(operation.errorSchemas?.[status] ?? (host === 'core' ? 'CoreError' : 'PosError')) } },
  };
}

interface Operation {
  readonly success: Record<string, object>;
  /**
   * Error statuses its own rules answer whatever the request (an inactive generator's 409), beside
   * those its row implies (errorStatuses).
   */
  readonly refuses?: readonly number[];
  /** What an error status means for this operation, where the generic description is not enough. */
  readonly errorDescriptions?: Readonly<Record<number, string>>;
  /** The schema of an error status whose body says more than the host's error shape (a refused redemption's display messages). */
  readonly errorSchemas?: Readonly<Record<number, string>>;
  /** Said of the request body's resource, beside its schema. */
  readonly bodyNote?: string;
  /** Said of its Idempotency-Key, after what every key means. */
  readonly idempotencyNote?: string;
}

/**
 * The error statuses of an operation, from the facts of its row: what it reads can be malformed
 * (400), a path id names a record that may be missing (404), a key reused with another body or a
 * stale If-Match conflict (409, 412), a body can be too large, of another type or invalid (413,
 * 415, 422); every operation checks the token and its scope (401, 403) and can fail (500, 503).
 */
function errorStatuses(route: Route, operation: Operation): number[] {
  const reads = route.body || route.params || route.query || route.ifMatch || route.idempotencyKey;
  const statuses = [
    ...(reads ? [400] : []),
    401,
    403,
    ...(route.params ? [404] : []),
    ...(route.idempotencyKey ? [409] : []),
    ...(route.ifMatch ? [412] : []),
    ...(route.body ? [413, 415, 422] : []),
    500,
    503,
    ...(operation.refuses ?? []),
  ];
  return [...new Set(statuses)].sort((a, b) => a - b);
}

/**
 * What the document adds to a path parameter's schema: examples, and the bound of a code. No code
 * is longer than 64 characters (prefix 16 + 32 generated, and redemption's bound): the document
 * says so, while the server answers a longer one as any code it did not issue, 404.
 */
const pathParameterExtras: Readonly<Record<string, object>> = {
  id: { examples: [1, 42] },
  event_id: { examples: [1017] },
  code: { maxLength: 64 },
};

/**
 * A path or query value as the document types it: what it means (an integer, a boolean: its
 * `x-documented-as` in schemas.ts), so that a generated client takes `id: 42` and
 * `redeemed: true`. The server still reads the text strictly (its pattern: "01" or "1.0" answer
 * 400), which a number serialised by any client never is.
 */
function documentedAs(schema: Record<string, any>): object {
  const typed = schema['x-documented-as'];
  if (!typed) return schema;
  return { ...typed, ...(schema.description ? { description: schema.description } : {}) };
}

/** Path parameters from a path schema, each typed as what it means (documentedAs). */
const pathParameters = (schemaName: SchemaName) =>
  Object.entries(plain(requestSchemas[schemaName].properties)).map(([parameter, schema]) => ({
    name: parameter,
    in: 'path',
    required: true,
    description: (schema as { description?: string }).description,
    schema: { ...documentedAs(schema as Record<string, any>), ...pathParameterExtras[parameter] },
  }));

/** A TypeBox schema as plain JSON Schema (TypeBox marks its objects with symbols). */
function plain(schema: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema));
}

/**
 * The schemas schemas.ts marks with `x-component` (Discount and its three types, Money), each
 * shown once under components and referred to wherever a request or response schema holds it (a
 * default, which differs between create and PATCH, stays beside the reference). A `oneOf`
 * discriminated by a property gets the mapping of each branch's value to its component, so that a
 * generated client types a discount as a union and narrows it with a switch on `type`.
 */
function withComponents(schema: unknown): any {
  if (Array.isArray(schema)) return schema.map(withComponents);
  if (!schema || typeof schema !== 'object') return schema;
  const { 'x-component': name, default: fallback, ...rest } = schema as Record<string, any>;
  if (typeof name === 'string') return { ...ref(name), ...(fallback !== undefined ? { default: fallback } : {}) };
  if (fallback !== undefined) rest.default = fallback;
  const inner = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, withComponents(value)]));
  if (rest.discriminator && Array.isArray(rest.oneOf)) {
    const { propertyName } = rest.discriminator;
    const mapping = Object.fromEntries(
      rest.oneOf.map((branch: Record<string, any>) => [branch.properties[propertyName].const, `#/components/schemas/${branch['x-component']}`]),
    );
    inner.discriminator = { ...rest.discriminator, mapping };
  }
  return inner;
}

/** The components of `x-component` schemas, by name, from every request schema; one name, one schema. */
function componentsOf(schema: unknown, found: Record<string, unknown> = {}): Record<string, unknown> {
  if (Array.isArray(schema)) schema.forEach((item) => componentsOf(item, found));
  else if (schema && typeof schema === 'object') {
    const { 'x-component': name, default: _default, ...rest } = schema as Record<string, unknown>;
    if (typeof name === 'string') {
      const component = withComponents(rest);
      if (found[name] && JSON.stringify(found[name]) !== JSON.stringify(component)) throw new Error(`openapi: two different schemas are named ${name}`);
      found[name] = component;
    }
    Object.values(rest).forEach((value) => componentsOf(value, found));
    if (_default !== undefined) componentsOf(_default, found);
  }
  return found;
}

/**
 * A request schema as a client should read it: the fields the server owns or that cannot change
 * (declared `not: {}` for the validators, so that sending one answers 422 naming it) are left
 * out, and named in the description instead; with `additionalProperties: false`, a tool that
 * validates against the document refuses them as the server does.
 */
function clientView(schema: Record<string, any>): Record<string, any> {
  const properties = Object.entries<Record<string, any>>(schema.properties ?? {});
  const refused = properties.filter(([, property]) => 'not' in property);
  if (refused.length === 0) return schema;
  const kept = Object.fromEntries(properties.filter(([, property]) => !('not' in property)));
  const names = refused.map(([name]) => name).join(', ');
  return { ...schema, properties: kept, description: `${schema.description ? `${schema.description} ` : ''}Sending ${names} answers 422 naming the field.` };
}

/**
 * An example of every request body, in the form a client sends it (test/unit/http/openapi.test.ts
 * checks each with the server's own validator), so that generated requests are meaningful.
 */
const requestExamples: Partial<Record<SchemaName, object>> = {
  codeGeneratorCreate: {
    generation_type: 'tillgate',
    code_length: 8,
    description: 'Winter promotion',
    prefix: 'WIN-',
    store_id: 42,
    discount: { type: 'percent', percent_off: 10, max_amount_off: 2000, currency: 'EUR' },
    minimum_basket: { amount: 2000, currency: 'EUR' },
    valid_until: '2027-01-07T00:00:00+01:00',
    site_ids: ['S-0042', 'S-0043'],
  },
  // Every field a PATCH can change, so that a tool deriving variations from the example (Portman's fuzzer) finds each.
  codeGeneratorPatch: {
    status: 'inactive',
    description: 'Winter promotion (ended early)',
    discount: { type: 'percent', percent_off: 15, max_amount_off: 2500, currency: 'EUR' },
    minimum_basket: { amount: 2500, currency: 'EUR' },
    valid_from: '2026-12-01T00:00:00+01:00',
    valid_until: '2026-12-24T00:00:00+01:00',
    site_ids: ['S-0042'],
    max_redemptions_per_code: 1,
    max_redemptions: 5000,
    max_redemptions_per_customer: 1,
  },
  codesIssue: { count: 100 },
  issuanceJobCreate: { count: 100000 },
  exportCreate: { redeemed: true },
  voidTransaction: {
    site_id: 'S-0042',
    pos_transaction_id: 'T-1001',
    register_id: 'R1',
    receipt_id: 'RC-88',
    occurred_at: '2026-11-21T14:03:00Z',
    business_date: '2026-11-21',
  },
  codesRedemption: {
    site_id: 'S-0042',
    pos_transaction_id: 'T-1001',
    register_id: 'R1',
    codes: ['WIN-7KQ2M9XA'],
    basket: { total: 4250, currency: 'EUR' },
    customer_id: 'CARD-4417-0042',
  },
  webhookEndpointCreate: {
    url: 'https://backoffice.example.com/tillgate/webhooks',
    event_types: ['codes.redeemed', 'transaction.voided'],
    description: 'Back office',
  },
  webhookEndpointPatch: { status: 'disabled' },
  emptyObject: {},
};

/** The example body of a row: its schema's example, under the row's root. */
function requestExample(route: Route): object | undefined {
  if (!route.body) return undefined;
  const example = requestExamples[route.body.schema];
  if (!example) return undefined;
  return route.body.root ? { [route.body.root]: example } : example;
}

/**
 * The request body of a row: `{ "<root>": resource }` or the resource itself, the resource being
 * the schema the server validates with (as a client reads it: clientView); an optional one may be left out.
 */
function requestBody(route: Route, note: string | undefined) {
  if (!route.body) return undefined;
  const { root, schema, optional } = route.body;
  const resource = withComponents(clientView({ ...plain(requestSchemas[schema]), ...(note ? { description: note } : {}) }));
  const example = requestExample(route);
  if (!example) throw new Error(`openapi: no request example for ${schema} (requestExamples in openapi/document.ts)`);
  return {
    required: !optional,
    ...(optional ? { description: `No body, or ${schema === 'emptyObject' ? 'an empty JSON object' : 'this JSON object'}.` } : {}),
    content: {
      'application/json': {
        schema: root ? { type: 'object', required: [root], properties: { [root]: resource } } : resource,
        examples: { [route.operationId]: { summary: route.summary, value: example } },
      },
    },
  };
}

/** Query parameters from a query schema: each property a parameter with its own schema. */
const queryParameters = (schemaName: SchemaName) =>
  Object.entries(plain(requestSchemas[schemaName].properties)).map(([name, property]) => ({
    name,
    in: 'query',
    required: false,
    description: (property as { description?: string }).description,
    schema: documentedAs(property as Record<string, any>),
  }));

/** A core read: 200 with its schema (any JSON when none is named), or 304 on a matching If-None-Match. */
const read = (description: string, schema?: string) => ({
  200: { description, headers: coreHeaders, content: { 'application/json': { schema: schema ? ref(schema) : {} } } },
  304: {
    description: 'Not modified: If-None-Match matched the ETag. No body, and no Content-Type or Content-Length (RFC 9110 §15.4.5).',
    headers: notModifiedHeaders,
  },
});

const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Repeats with the same key and body return the first response; a different body answers 409. Kept 24 hours, per account and route.',
  schema: { type: 'string', maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
};

const requestIdParameter = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: 'Echoed in the response when it matches this pattern; any other value is replaced by a generated id (not refused).',
  schema: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$' },
};

const ifNoneMatchParameter = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'The ETag of an earlier 200 of this read: when it still matches, the answer is 304 with no body.',
  schema: { type: 'string', maxLength: MAX_IF_MATCH_LENGTH },
};

const ifMatchParameter = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'The ETag of a GET (or *); a mismatch answers 412 and changes nothing; a value that is not entity tags answers 400.',
  schema: { type: 'string', maxLength: MAX_IF_MATCH_LENGTH },
};
const countedIfMatchParameter = (count: EtagCount) => ({
  ...ifMatchParameter,
  description: `${ifMatchParameter.description} Only the tag's first part is compared: a ${count.field} that moved since the tag was read is no mismatch.`,
});

/** The parameters of a row, in the order path, query, headers. */
function parametersOf(route: Route, operation: Operation) {
  return [
    ...(route.params ? pathParameters(route.params) : []),
    ...(route.query ? queryParameters(route.query) : []),
    ...(route.method === 'GET' ? [ifNoneMatchParameter] : []),
    ...(route.ifMatch ? [route.countInEtag ? countedIfMatchParameter(route.countInEtag) : ifMatchParameter] : []),
    ...(route.idempotencyKey
      ? [
          operation.idempotencyNote
            ? { ...idempotencyKeyParameter, description: `${idempotencyKeyParameter.description} ${operation.idempotencyNote}` }
            : idempotencyKeyParameter,
        ]
      : []),
    requestIdParameter,
  ];
}

const webhookEndpointWithSecret = (description: string, status: number, location = false) => ({
  [status]: {
    description,
    headers: {
      ...coreHeaders,
      ...(location ? { Location: header('/v1.0/webhook_endpoints/{id}', { type: 'string', pattern: '^/v1\\.0/webhook_endpoints/[1-9][0-9]*$' }) } : {}),
      ...(location
        ? { 'Idempotent-Replayed': header('true when this is the stored answer to an earlier request: it carries no secret.', { const: 'true' }, false) }
        : {}),
    },
    content: { 'application/json': { schema: ref(location ? 'WebhookEndpointCreated' : 'WebhookEndpointWithSecret') } },
  },
});

const webhookOperations: Record<string, Operation> = {
  createWebhookEndpoint: {
    idempotencyNote: 'A replayed answer carries no secret (none is ever stored): a client that lost it rotates.',
    success: webhookEndpointWithSecret(
      'Created. The secret (whsec_ and the base64 of 32 random bytes) is shown here and in a rotation’s answer, never again; a replayed answer (Idempotent-Replayed: true) has none. Webhook endpoints write no events.',
      201,
      true,
    ),
    refuses: [409],
    errorDescriptions: {
      409: 'The account already has 10 webhook endpoints (delete one first), or the Idempotency-Key was already used with a different body. Nothing was created.',
    },
  },
  listWebhookEndpoints: {
    success: read('A page of webhook endpoints in ascending id order (no secrets).', 'WebhookEndpointPage'),
  },
  getWebhookEndpoint: {
    success: read('The webhook endpoint (no secret).', 'WebhookEndpointResponse'),
  },
  updateWebhookEndpoint: {
    bodyNote: 'url, event_types, description and status. Enabling an endpoint does not send it the events committed while it was disabled.',
    success: {
      200: {
        description: 'The endpoint after the change (unchanged when nothing differed). No event is written.',
        headers: coreHeaders,
        content: { 'application/json': { schema: ref('WebhookEndpointResponse') } },
      },
    },
  },
  deleteWebhookEndpoint: {
    success: {
      200: {
        description:
          'Deleted: nothing more is sent to it. The body is a single space (one byte), as an acknowledged event answers: read the status, not the body.',
        headers: coreHeaders,
        'x-raw-body': ' ',
      },
    },
  },
  rotateWebhookSecret: {
    errorDescriptions: {
      503: 'The database is throttling, unreachable or did not answer in time; retry after Retry-After seconds. The rotation may have been applied, its secret lost with the answer: rotate again and keep the secret of the answer you get (deliveries are signed with it and the one before it for 24 hours).',
    },
    success: webhookEndpointWithSecret(
      'The endpoint with its new secret, shown this once. For 24 hours every delivery carries two signatures (new and previous secret, space-separated in webhook-signature), then only the new one.',
      200,
    ),
  },
  listWebhookDeliveries: {
    success: read("A page of the endpoint's deliveries in ascending event_id order.", 'WebhookDeliveryPage'),
  },
  retryWebhookDelivery: {
    success: {
      202: {
        description: 'Accepted: the event is sent again now, signed afresh (a failed delivery too). Should it fail, the retry schedule goes on.',
        headers: coreHeaders,
        content: { 'application/json': { schema: ref('WebhookDeliveryResponse') } },
      },
    },
    refuses: [409],
    errorDescriptions: {
      409: 'The endpoint is disabled: enable it (PATCH status "enabled") before retrying. Nothing was sent.',
      503: 'The database is throttling, unreachable or did not answer in time; retry after Retry-After seconds. The attempt may have been queued: repeated, the event may arrive twice, with the same webhook-id (receivers deduplicate by it).',
    },
  },
};

const operations: Record<string, Operation> = {
  ...webhookOperations,
  listCodeGenerators: {
    success: read('A page of code generators in ascending id order.', 'CodeGeneratorPage'),
  },
  getCodeGenerator: {
    success: read('The code generator.', 'CodeGeneratorResponse'),
  },
  updateCodeGenerator: {
    bodyNote:
      'Only status, description, the promotion terms (discount, minimum_basket, valid_from, valid_until, site_ids) and its limits (max_redemptions_per_code, max_redemptions, max_redemptions_per_customer) can change; an absent field stays as it is. ' +
      'A limit may be raised or lowered: lowered below the uses held, it refuses new uses until voids bring the count under, and takes no use back. ' +
      'The terms are judged together with the stored ones: a discount currency that differs from the stored minimum_basket currency, or a valid_until not after the stored valid_from, answers 422.',
    success: {
      200: {
        description:
          'The generator after the change (unchanged when nothing differed), with a code_generator.updated event when something changed. ' +
          'A change takes effect at once: a redemption that commits after this answer is judged by the new status, terms and limits.',
        headers: coreHeaders,
        content: { 'application/json': { schema: ref('CodeGeneratorResponse') } },
      },
    },
  },
  issueCodes: {
    success: {
      201: {
        description: 'All the codes asked for, issued together with a codes.issued event.',
        headers: {
          ...coreHeaders,
          'Idempotent-Replayed': header('true when this is the stored answer to an earlier request.', { const: 'true' }, false),
        },
        content: { 'application/json': { schema: ref('IssuedCodes') } },
      },
    },
    refuses: [409],
    errorDescriptions: {
      409:
        "The generator is inactive, or too close to exhausting its codes to issue that many (issue fewer, or use a longer code_length), or the account's issued codes would pass its quota " +
        '(ACCOUNT_CODE_QUOTA, 10,000,000 by default; the message names the quota and what the account holds), or the Idempotency-Key was already used with a different body. Nothing was issued.',
    },
  },
  createIssuanceJob: {
    bodyNote: 'count: 1 to 1,000,000 codes, issued all together or not at all.',
    success: {
      202: {
        description:
          'Accepted: the job runs (status running, issued 0). Poll GET /v1.0/issuance_jobs/{id} (Location): issued grows, never decreasing, then status is completed (every code issued at once, ' +
          "their issued_at the job's completed_at, with one codes.issued event) or failed (error names the reason; none of its codes is ever issued). The codes are listed by GET /v1.0/codegen/{id}/codes.",
        headers: {
          ...coreHeaders,
          Location: header('/v1.0/issuance_jobs/{id}', { type: 'string', pattern: '^/v1\\.0/issuance_jobs/[1-9][0-9]*$' }),
          'Idempotent-Replayed': header('true when this is the stored answer to an earlier request.', { const: 'true' }, false),
        },
        content: { 'application/json': { schema: ref('IssuanceJobResponse') } },
      },
    },
    refuses: [409],
    errorDescriptions: {
      409:
        "The generator is inactive, or its shape cannot make that many distinct codes, or the account has 3 issuance jobs running (wait for one to end), or the account's issued codes would pass its quota " +
        '(ACCOUNT_CODE_QUOTA; the codes of a job are reserved when it starts and given back if it fails), or the Idempotency-Key was already used with a different body. Nothing was started.',
    },
  },
  getIssuanceJob: {
    success: read(
      'The issuance job: its progress (issued, never decreasing) while running, then completed or failed (error naming the reason).',
      'IssuanceJobResponse',
    ),
  },
  createExport: {
    bodyNote:
      'No body, or {}, exports every issued code; {"redeemed":true} only the codes with times_redeemed of 1 or more, {"redeemed":false} the others. An inactive generator\'s codes can be exported too.',
    success: {
      202: {
        description:
          'Accepted: the export is running (rows 0, download_url null). Poll Location (GET /v1.0/exports/{id}) until status is completed or failed, or wait for its export.completed event. No event is written now.',
        headers: {
          ...coreHeaders,
          Location: header('/v1.0/exports/{id}', { type: 'string', pattern: '^/v1\\.0/exports/[1-9][0-9]*$' }),
          'Idempotent-Replayed': header('true when this is the stored answer to an earlier request.', { const: 'true' }, false),
        },
        content: { 'application/json': { schema: ref('ExportResponse') } },
      },
    },
  },
  getExport: {
    success: read(
      'The export. Once completed: rows (the codes in the file, the header row not counted), download_url (a presigned S3 GET URL signed afresh on every read, valid 15 minutes; in AWS it stops working sooner if the credentials that signed it expire first: read the export again for a new one) and expires_at (when the file is deleted: 7 days after completion; then download_url is null). ' +
        'The file: CSV as RFC 4180 writes it (UTF-8 without a byte-order mark, CRLF, fields quoted only where they hold a comma, a quote or a line break, null as an empty field), one row per code in code order after the header row code,code_generator_id,issued_at,times_redeemed,max_redemptions_per_code,last_redeemed_at,site_id,pos_transaction_id; each row the codes list item of that code.',
      'ExportResponse',
    ),
  },
  getCode: {
    success: read('The code, spelled as issued, with the redemption that holds it now (or nulls) and its uses, exact.', 'CodeResponse'),
  },
  listCodes: {
    success: read(
      "A page of the generator's issued codes in code order, each with the redemption that holds it now (or nulls) and its uses. Reads an index: it may lag a redemption or a release by about a second, and a multi-use code's times_redeemed by a few seconds. redeemed=true lists the codes with times_redeemed of 1 or more.",
      'CodePage',
    ),
  },
  listCodeRedemptions: {
    success: read(
      'A page of the transactions holding the code now, in redemption order (time, then transaction): a single-use code has one at most. Exact: a void takes its transaction off at once.',
      'CodeRedemptionPage',
    ),
  },
  redeemCodes: {
    bodyNote: 'The fields of a void and the codes. Keys this version does not know are ignored; null counts as absent.',
    success: {
      200: {
        description:
          'Every listed code is held by this transaction now: redeemed by this request (with a codes.redeemed event), or by an earlier request of the same transaction (it keeps its first redeemed_at). One code_redeemed display message per distinct code, in the order listed.',
        headers: commonHeaders,
        content: { 'application/json': { schema: ref('RedeemedCodes') } },
      },
    },
    refuses: [409],
    errorDescriptions: redemptionErrors('Nothing was written.'),
    errorSchemas: { 409: 'RedemptionConflict', 422: 'RedemptionRefused' },
  },
  validateCodes: {
    bodyNote: 'The same body as POST /v2.0/redeemed_codes. Keys this version does not know are ignored; null counts as absent.',
    success: {
      200: {
        description: 'A redemption of these codes by this transaction would succeed now: one code_valid display message per distinct code. Writes nothing.',
        headers: commonHeaders,
        content: { 'application/json': { schema: ref('ValidatedCodes') } },
      },
    },
    refuses: [409],
    errorDescriptions: redemptionErrors('A redemption would fail the same way.'),
    errorSchemas: { 409: 'RedemptionConflict', 422: 'RedemptionRefused' },
  },
  listEvents: {
    success: read("A page of the account's live events in ascending id order.", 'EventPage'),
  },
  createCodeGenerator: {
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
  },
  getEvent: {
    success: {
      200: { description: 'The event.', headers: coreHeaders, content: { 'application/json': { schema: ref('EventResponse') } } },
      304: {
        description: 'Not modified: If-None-Match matched the ETag. No body, and no Content-Type or Content-Length (RFC 9110 §15.4.5).',
        headers: notModifiedHeaders,
      },
    },
  },
  deleteEvent: {
    success: {
      200: {
        description: 'Acknowledged and deleted. The body is a single space (one byte), as the original service answers.',
        headers: coreHeaders,
        'x-raw-body': ' ',
      },
    },
  },
  voidTransaction: {
    bodyNote: 'Keys this version does not know are ignored; null counts as absent.',
    success: {
      200: {
        description:
          'Voided, with its transaction.voided event, releasing every code the transaction held (one code_released display message each, after the first, and a codes.released event); or a repeat of an earlier void of the same account, site_id and pos_transaction_id, answered with the first body (Idempotent-Replayed: true) and writing nothing.',
        headers: {
          ...commonHeaders,
          'Idempotent-Replayed': header('true when this is the stored answer to an earlier void.', { const: 'true' }, false),
        },
        content: { 'application/json': { schema: ref('VoidResponse') } },
      },
    },
  },
};

/** The two refusals of a redemption or a check, besides the generic ones. */
function redemptionErrors(outcome: string): Record<number, string> {
  return {
    429:
      'Or answered by the function: the guessing limit. This token named more codes that do not exist (in redemptions and checks together, each once per request) ' +
      'than UNKNOWN_CODE_LIMIT (120 by default) in the last minute; a request that names an unknown code is refused (message_id too_many_unknown_codes, ' +
      `X-Request-Id and this host's Content-Type) until Retry-After seconds have passed. A request whose codes all exist is never refused by this rule. ${outcome}`,
    409: `Refused, no code unknown: one errors entry and one display message per failing code (its first broken rule, in this order: code_generator_inactive, code_not_yet_valid, code_expired, code_not_valid_at_site, basket_required, currency_mismatch, basket_below_minimum, customer_required, code_already_redeemed (held by another transaction, the code's maximum being 1) or code_usage_limit_reached (its maximum above 1), promotion_budget_exhausted, customer_limit_reached; the codes of one request count together, in their order), plus transaction_voided once when the transaction was voided before, and too_many_codes once when it would hold more than ${MAX_HELD_CODES} codes. ${outcome}`,
    422: `A code is not an issued code of this account (message_id code_not_found; the other failures are named too), or the body failed validation (message_id validation_failed, one errors entry per problem). ${outcome}`,
  };
}

/** Where a multi-use code's holders are, instead of its holder fields. */
const MULTI_USE_HOLDERS = 'GET /v1.0/codegen/{id}/codes/{code}/redemptions lists the transactions holding it';

/** A page of a list: the items and the cursor of the next page (null on the last). */
function page(name: string, item: object) {
  return {
    type: 'object',
    additionalProperties: false,
    required: [name, 'next_cursor'],
    properties: { [name]: { type: 'array', maxItems: 1000, items: item }, next_cursor: { type: ['string', 'null'] } },
  };
}

/** The pos host's body, success or failure: `transaction` with `errors` and cashier messages. */
function transactionEnvelope(errors: object, messages: readonly MessageName[]) {
  return {
    type: 'object',
    required: ['transaction'],
    additionalProperties: false,
    properties: {
      transaction: {
        type: 'object',
        additionalProperties: false,
        required: ['errors', 'display_messages'],
        properties: { errors, display_messages: { type: 'array', minItems: 1, items: oneOfMessages(messages) } },
      },
    },
  };
}

const noErrors = { type: 'array', maxItems: 0 };
const posErrors = {
  type: 'array',
  minItems: 1,
  items: { type: 'object', additionalProperties: false, required: ['message'], properties: { message: { type: 'string', minLength: 1 } } },
};

/**
 * The display messages, one schema per `message_id` and answer: `message_content` differs by
 * message (and `transaction_voided` between a void's answer and a refused redemption's), so each
 * answer lists the messages it can carry as a `oneOf` discriminated by `message_id`, and a
 * generated client narrows `message_content` with a `switch` on `message_id`.
 */
const codeAsIssued = { type: 'string', pattern: '^[A-Z0-9-]{4,48}$', description: 'The code as issued.' };
const generatorId = { type: 'integer', minimum: 1 };
const timestamp = { type: 'string', format: 'date-time' };
const content = (properties: Record<string, object>, optional: readonly string[] = []) => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties).filter((name) => !optional.includes(name)),
  properties,
});

function displayMessage(messageIds: readonly string[], messageContent: object, description: string) {
  return {
    type: 'object',
    additionalProperties: false,
    description,
    required: ['message', 'message_id', 'message_content', 'priority'],
    properties: {
      message: { type: 'string', minLength: 1, description: 'The text for the cashier.' },
      message_id: messageIds.length === 1 ? { type: 'string', const: messageIds[0] } : { type: 'string', enum: [...messageIds] },
      message_content: messageContent,
      priority: { type: 'integer' },
    },
  };
}

/** Every error of the functions (errors.ts) and of API Gateway (infra/gateway-errors.ts) but the per-token limit's. */
const errorMessageIds = [...new Set([...ERROR_CODES, ...gatewayErrors.map((error) => error.messageId), METHOD_NOT_ALLOWED.messageId])];

/** What a code gives: its promotion's discount, and the amount when a basket was sent and the discount takes something off. */
const given = {
  discount: { ...ref('Discount'), description: "The promotion's discount when the code was redeemed (a retry answers with the recorded one)." },
  discount_amount: {
    type: 'integer',
    minimum: 0,
    maximum: 1e12,
    description:
      "What this code takes off the basket, in the currency's minor units: the codes of one request apply in their order, each to the total left after those before it. Present only when a basket was sent and the discount is not none.",
  },
  currency: { type: 'string', pattern: '^[A-Z]{3}$', maxLength: 3, description: "The basket's currency, beside discount_amount." },
};
const optionalGiven = ['discount_amount', 'currency'];
const aboutCode = { code: codeAsIssued, code_generator_id: generatorId };

const messages = {
  CodeRedeemedMessage: displayMessage(
    ['code_redeemed'],
    content(
      {
        code: codeAsIssued,
        code_generator_id: generatorId,
        description: { type: 'string', description: "The generator's description; it may lag a change by up to a minute." },
        redeemed_at: { ...timestamp, description: 'When this transaction redeemed the code (a retry keeps the first).' },
        ...given,
      },
      optionalGiven,
    ),
    'A code this transaction holds now, with what it gives. The cashier text names the amount, e.g. `Code WIN-7KQ2M9XA redeemed: 2.50 EUR off`.',
  ),
  CodeValidMessage: displayMessage(
    ['code_valid'],
    content({ code: codeAsIssued, code_generator_id: generatorId, description: { type: 'string' }, ...given }, optionalGiven),
    'A code a redemption by this transaction would take now, with what it would give.',
  ),
  CodeNotYetValidMessage: displayMessage(
    ['code_not_yet_valid'],
    content({ ...aboutCode, valid_from: timestamp }),
    "Its promotion starts later (the service's clock, not the till's occurred_at).",
  ),
  CodeExpiredMessage: displayMessage(
    ['code_expired'],
    content({ ...aboutCode, valid_until: timestamp }),
    'Its promotion ended (now is at or after valid_until).',
  ),
  CodeNotValidAtSiteMessage: displayMessage(
    ['code_not_valid_at_site'],
    content({ ...aboutCode, site_id: { type: 'string', description: "The transaction's site, which the promotion's site_ids do not list." } }),
    "Its promotion is not valid at the transaction's site.",
  ),
  BasketRequiredMessage: displayMessage(
    ['basket_required'],
    content({ ...aboutCode, minimum_basket: ref('Money') }),
    'Its promotion has a minimum basket, and the transaction sent no basket.',
  ),
  CurrencyMismatchMessage: displayMessage(
    ['currency_mismatch'],
    content({
      ...aboutCode,
      currency: { type: 'string', pattern: '^[A-Z]{3}$', maxLength: 3, description: "The promotion's currency." },
      basket_currency: { type: 'string', pattern: '^[A-Z]{3}$', maxLength: 3 },
    }),
    "The basket's currency differs from the promotion's.",
  ),
  BasketBelowMinimumMessage: displayMessage(
    ['basket_below_minimum'],
    content({ ...aboutCode, minimum_basket: ref('Money'), basket_total: { type: 'integer', minimum: 0, maximum: 1e12 } }),
    "The basket's total is below the promotion's minimum basket.",
  ),
  TransactionVoidedMessage: displayMessage(
    ['transaction_voided'],
    content(
      {
        site_id: { type: 'string' },
        pos_transaction_id: { type: 'string' },
        receipt_id: { type: 'string', description: "The void's receipt_id, when it had one." },
        event_id: { type: 'integer', minimum: 1, description: 'The transaction.voided event.' },
        voided_at: timestamp,
      },
      ['receipt_id'],
    ),
    'The void, first of its answer.',
  ),
  CodeReleasedMessage: displayMessage(['code_released'], content({ code: codeAsIssued, code_generator_id: generatorId }), 'A code the void gave back.'),
  CodeNotFoundMessage: displayMessage(
    ['code_not_found'],
    content({ code: { type: 'string', description: 'The code as the till sent it.' } }),
    'No issued code of this account.',
  ),
  CodeAlreadyRedeemedMessage: displayMessage(
    ['code_already_redeemed'],
    content({ code: codeAsIssued, code_generator_id: generatorId }),
    'Held by another transaction.',
  ),
  CodeGeneratorInactiveMessage: displayMessage(
    ['code_generator_inactive'],
    content({ code: codeAsIssued, code_generator_id: generatorId }),
    'Its generator is inactive.',
  ),
  CustomerRequiredMessage: displayMessage(
    ['customer_required'],
    content({ ...aboutCode, max_redemptions_per_customer: { type: 'integer', minimum: 1, maximum: 1000 } }),
    'Its promotion limits uses per customer, and the transaction sent no customer_id.',
  ),
  CodeUsageLimitReachedMessage: displayMessage(
    ['code_usage_limit_reached'],
    content({ ...aboutCode, max_redemptions_per_code: { type: 'integer', minimum: 2, maximum: 1_000_000 } }),
    'A multi-use code every use of which is held (its maximum above 1).',
  ),
  PromotionBudgetExhaustedMessage: displayMessage(
    ['promotion_budget_exhausted'],
    content({ ...aboutCode, max_redemptions: { type: 'integer', minimum: 1, maximum: 100_000_000 } }),
    "Its promotion's budget is used up: max_redemptions uses are held across its codes.",
  ),
  CustomerLimitReachedMessage: displayMessage(
    ['customer_limit_reached'],
    content({ ...aboutCode, max_redemptions_per_customer: { type: 'integer', minimum: 1, maximum: 1000 } }),
    'The customer holds as many uses of its promotion as its limit per customer.',
  ),
  TransactionVoidedRefusalMessage: displayMessage(
    ['transaction_voided'],
    content({ site_id: { type: 'string' }, pos_transaction_id: { type: 'string' } }),
    'This transaction was voided before: no code can be redeemed on it.',
  ),
  TooManyCodesMessage: displayMessage(
    ['too_many_codes'],
    content({
      held: { type: 'integer', minimum: 0, description: 'Codes the transaction holds.' },
      adding: { type: 'integer', minimum: 1, description: 'Codes this request would add.' },
      limit: { type: 'integer', minimum: 1, description: 'The most a transaction holds.' },
    }),
    'The transaction would hold too many codes.',
  ),
  ErrorMessage: displayMessage(
    errorMessageIds,
    content({ request_id: { type: 'string', description: 'Quote it to support.' } }),
    'Any other refusal or fault: message_id names it.',
  ),
  TokenRateLimitedMessage: displayMessage(
    [TOKEN_RATE_LIMITED.messageId, SOURCE_RATE_LIMITED.messageId],
    content({}),
    "This token, or this source address, is over its own rate limit (WAF's fixed answer).",
  ),
  HeadersTooLargeMessage: displayMessage(
    [HEADERS_TOO_LARGE.messageId],
    content({}),
    `More than ${HEADER_LIMITS.count} headers or ${HEADER_LIMITS.bytes} bytes of them: WAF cannot inspect them whole and refuses the request (WAF's fixed answer; the local server gives the same).`,
  ),
};
type MessageName = keyof typeof messages;

/** The display messages an answer can carry, discriminated by message_id (each id mapped to its schema). */
function oneOfMessages(names: readonly MessageName[]) {
  if (names.length === 1) return ref(names[0]!);
  const mapping: Record<string, string> = {};
  for (const name of names) {
    const id = messages[name].properties.message_id as { const?: string; enum?: string[] };
    for (const value of id.const !== undefined ? [id.const] : id.enum!) {
      if (mapping[value]) throw new Error(`openapi: message_id ${value} maps to two schemas in one answer`);
      mapping[value] = `#/components/schemas/${name}`;
    }
  }
  return { oneOf: names.map(ref), discriminator: { propertyName: 'message_id', mapping } };
}

const refusals: readonly MessageName[] = [
  'CodeGeneratorInactiveMessage',
  'CodeNotYetValidMessage',
  'CodeExpiredMessage',
  'CodeNotValidAtSiteMessage',
  'BasketRequiredMessage',
  'CurrencyMismatchMessage',
  'BasketBelowMinimumMessage',
  'CustomerRequiredMessage',
  'CodeAlreadyRedeemedMessage',
  'CodeUsageLimitReachedMessage',
  'PromotionBudgetExhaustedMessage',
  'CustomerLimitReachedMessage',
  'TransactionVoidedRefusalMessage',
  'TooManyCodesMessage',
];

const UTC_MILLIS = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';

/**
 * A code generator as every read answers it: the seed's eleven fields, then the promotion terms
 * and limits with their defaults (the create schema's, with the discount's types and Money as
 * components), each always present; date-times in UTC with milliseconds.
 */
const codeGeneratorFields = (() => {
  const fields = withComponents(plain(codeGeneratorCreate.properties)) as Record<string, any>;
  const utc = (description: string) => ({ type: 'string', format: 'date-time', pattern: UTC_MILLIS, description });
  const utcOrNull = (name: string) => ({ type: ['string', 'null'], format: 'date-time', pattern: UTC_MILLIS, description: fields[name].description });
  return {
    generation_type: fields.generation_type,
    buffer_type: fields.buffer_type,
    code_length: fields.code_length,
    description: fields.description,
    prefix: fields.prefix,
    store_id: fields.store_id,
    status: fields.status,
    id: { type: 'integer', minimum: 1 },
    account_id: { type: 'integer', minimum: 1 },
    created_at: utc('When the generator was created.'),
    updated_at: utc('When it last changed (as created_at until then).'),
    discount: fields.discount,
    minimum_basket: fields.minimum_basket,
    valid_from: utcOrNull('valid_from'),
    valid_until: utcOrNull('valid_until'),
    site_ids: fields.site_ids,
    max_redemptions_per_code: fields.max_redemptions_per_code,
    max_redemptions: fields.max_redemptions,
    max_redemptions_per_customer: fields.max_redemptions_per_customer,
    times_redeemed: {
      type: 'integer',
      minimum: 0,
      readOnly: true,
      description:
        "Uses held across the generator's codes: redemptions not voided. Kept by a worker from the promotion's shards, so it may lag a redemption or a void by a few seconds. Read-only: a create or PATCH that sends it answers 422.",
    },
  };
})();

const schemas = {
  ...componentsOf(plain(requestSchemas)),
  CodeGeneratorResponse: {
    type: 'object',
    required: ['code_generator'],
    additionalProperties: false,
    properties: {
      code_generator: {
        type: 'object',
        additionalProperties: false,
        required: Object.keys(codeGeneratorFields),
        properties: codeGeneratorFields,
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
          type: { enum: [...EVENT_TYPES] },
          resource_id: {
            type: 'string',
            description:
              'The generator id (code_generator.*, codes.issued), the export id (export.completed), or for transaction.voided, codes.redeemed and codes.released the transaction: site_id and pos_transaction_id, each encoded as encodeURIComponent does, joined by /.',
          },
          created_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
  EventPage: page('events', { $ref: '#/components/schemas/EventResponse/properties/event' }),
  CodeGeneratorPage: page('code_generators', { $ref: '#/components/schemas/CodeGeneratorResponse/properties/code_generator' }),
  IssuedCodes: {
    type: 'object',
    additionalProperties: false,
    required: ['codes', 'code_generator_id', 'issued_at'],
    properties: {
      codes: { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: { type: 'string', pattern: '^[A-Z0-9-]{4,48}$' } },
      code_generator_id: { type: 'integer', minimum: 1 },
      issued_at: { type: 'string', format: 'date-time' },
    },
  },
  IssuanceJobResponse: {
    type: 'object',
    additionalProperties: false,
    required: ['issuance_job'],
    properties: {
      issuance_job: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'code_generator_id', 'count', 'issued', 'status', 'error', 'created_at', 'completed_at'],
        properties: {
          id: { type: 'integer', minimum: 1 },
          code_generator_id: { type: 'integer', minimum: 1 },
          count: { type: 'integer', minimum: 1, maximum: 1000000 },
          issued: {
            type: 'integer',
            minimum: 0,
            maximum: 1000000,
            description: "The job's codes written so far; never decreasing. They read as issued only once status is completed.",
          },
          status: { enum: ['running', 'completed', 'failed'] },
          error: { type: ['string', 'null'], description: 'Why a failed job failed (e.g. the code space is exhausted); null otherwise.' },
          created_at: { type: 'string', format: 'date-time' },
          completed_at: {
            type: ['string', 'null'],
            format: 'date-time',
            description: "When the job completed (its codes' issued_at) or failed; null while running.",
          },
        },
      },
    },
  },
  ExportResponse: {
    type: 'object',
    additionalProperties: false,
    required: ['export'],
    properties: {
      export: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'code_generator_id', 'status', 'rows', 'error', 'created_at', 'completed_at', 'download_url', 'expires_at'],
        properties: {
          id: { type: 'integer', minimum: 1 },
          code_generator_id: { type: 'integer', minimum: 1 },
          status: { enum: ['running', 'completed', 'failed'] },
          rows: { type: 'integer', minimum: 0, description: 'The codes in the file (the header row not counted); 0 until completed.' },
          error: { type: ['string', 'null'], description: 'Why a failed export failed; null otherwise.' },
          created_at: { type: 'string', format: 'date-time' },
          completed_at: { type: ['string', 'null'], format: 'date-time' },
          download_url: {
            type: ['string', 'null'],
            format: 'uri',
            description: 'A presigned S3 GET URL of the CSV file, valid 15 minutes, signed afresh on every read; null unless completed and not yet expired.',
          },
          expires_at: { type: ['string', 'null'], format: 'date-time', description: 'When the file is deleted: 7 days after completed_at.' },
        },
      },
    },
  },
  CodeResponse: {
    type: 'object',
    additionalProperties: false,
    required: ['code'],
    properties: {
      code: {
        type: 'object',
        additionalProperties: false,
        required: [
          'code',
          'code_generator_id',
          'issued_at',
          'redeemed_at',
          'site_id',
          'pos_transaction_id',
          'discount_amount',
          'currency',
          'times_redeemed',
          'max_redemptions_per_code',
        ],
        properties: {
          code: { type: 'string', pattern: '^[A-Z0-9-]{4,48}$' },
          code_generator_id: { type: 'integer', minimum: 1 },
          issued_at: { type: 'string', format: 'date-time' },
          redeemed_at: {
            type: ['string', 'null'],
            format: 'date-time',
            description: `When the transaction holding the code redeemed it; null when no transaction holds it, or when max_redemptions_per_code is above 1 (${MULTI_USE_HOLDERS}).`,
          },
          site_id: { type: ['string', 'null'], description: 'The site of the transaction holding the code, or null (as redeemed_at).' },
          pos_transaction_id: { type: ['string', 'null'], description: 'The POS transaction holding the code, or null (as redeemed_at).' },
          discount_amount: {
            type: ['integer', 'null'],
            minimum: 0,
            maximum: 1e12,
            description:
              "What the holding redemption took off its basket, in the currency's minor units; null when no transaction holds the code, its redemption recorded no amount, or max_redemptions_per_code is above 1.",
          },
          currency: { type: ['string', 'null'], pattern: '^[A-Z]{3}$', maxLength: 3, description: 'The currency of discount_amount, or null.' },
          times_redeemed: {
            type: 'integer',
            minimum: 0,
            description:
              "How many transactions hold the code now: exact in the lookup; in the codes list, a multi-use code's count may lag its redemptions and voids by a few seconds.",
          },
          max_redemptions_per_code: {
            type: 'integer',
            minimum: 1,
            maximum: 1_000_000,
            description: "How many transactions may hold the code at once: its generator's current value (1: single-use).",
          },
        },
      },
    },
  },
  CodePage: page('codes', { $ref: '#/components/schemas/CodeResponse/properties/code' }),
  CodeRedemptionPage: page('redemptions', {
    type: 'object',
    additionalProperties: false,
    description: 'A transaction holding the code.',
    required: ['site_id', 'pos_transaction_id', 'redeemed_at', 'discount_amount', 'currency'],
    properties: {
      site_id: { type: 'string', minLength: 1, maxLength: 128 },
      pos_transaction_id: { type: 'string', minLength: 1, maxLength: 128 },
      redeemed_at: { type: 'string', format: 'date-time', description: 'When this transaction redeemed the code (its first request that named it).' },
      discount_amount: {
        type: ['integer', 'null'],
        minimum: 0,
        maximum: 1e12,
        description: "What this redemption took off its basket, in the currency's minor units; null when it recorded no amount.",
      },
      currency: { type: ['string', 'null'], pattern: '^[A-Z]{3}$', maxLength: 3, description: 'The currency of discount_amount, or null.' },
    },
  }),
  RedeemedCodes: { ...transactionEnvelope(noErrors, ['CodeRedeemedMessage']), description: 'One display message per distinct code, in the order listed.' },
  ValidatedCodes: { ...transactionEnvelope(noErrors, ['CodeValidMessage']), description: 'One display message per distinct code, in the order listed.' },
  VoidResponse: {
    ...transactionEnvelope(noErrors, ['TransactionVoidedMessage', 'CodeReleasedMessage']),
    description: 'The void first, then one code_released per code it gave back.',
  },
  RedemptionConflict: {
    ...transactionEnvelope(posErrors, refusals),
    description: 'One errors entry and one display message per failing code, plus transaction_voided and too_many_codes once each when they apply.',
  },
  RedemptionRefused: {
    ...transactionEnvelope(posErrors, ['CodeNotFoundMessage', ...refusals, 'ErrorMessage']),
    description:
      'Either the codes that failed (code_not_found for each code that is not an issued code of the account, the other failures named too), or validation_failed with one errors entry per problem.',
  },
  ...messages,
  WebhookEndpointResponse: {
    type: 'object',
    required: ['webhook_endpoint'],
    additionalProperties: false,
    properties: { webhook_endpoint: webhookEndpoint('never') },
  },
  WebhookEndpointCreated: {
    type: 'object',
    required: ['webhook_endpoint'],
    additionalProperties: false,
    properties: { webhook_endpoint: webhookEndpoint('unless replayed') },
  },
  WebhookEndpointWithSecret: {
    type: 'object',
    required: ['webhook_endpoint'],
    additionalProperties: false,
    properties: { webhook_endpoint: webhookEndpoint('always') },
  },
  WebhookEndpointPage: page('webhook_endpoints', { $ref: '#/components/schemas/WebhookEndpointResponse/properties/webhook_endpoint' }),
  WebhookDeliveryResponse: {
    type: 'object',
    required: ['delivery'],
    additionalProperties: false,
    properties: {
      delivery: {
        type: 'object',
        additionalProperties: false,
        required: ['event_id', 'event_type', 'status', 'attempts', 'last_attempt_at', 'last_response_status', 'next_attempt_at'],
        properties: {
          event_id: { type: 'integer', minimum: 1, description: 'The event id: webhook-id of every attempt.' },
          event_type: { enum: [...EVENT_TYPES] },
          status: { enum: ['pending', 'succeeded', 'failed'] },
          attempts: { type: 'integer', minimum: 0, description: 'Sends so far, the first included.' },
          last_attempt_at: { type: ['string', 'null'], format: 'date-time' },
          last_response_status: {
            type: ['integer', 'null'],
            description: "The receiver's status code; null when it did not answer (time-out, refused connection).",
          },
          next_attempt_at: { type: ['string', 'null'], format: 'date-time', description: 'When the next attempt is due; null unless pending.' },
        },
      },
    },
  },
  WebhookDeliveryPage: page('deliveries', { $ref: '#/components/schemas/WebhookDeliveryResponse/properties/delivery' }),
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
          properties: { message: { type: 'string', minLength: 1 }, field: { type: 'string' } },
        },
      },
    },
  },
  PosError: transactionEnvelope(posErrors, ['ErrorMessage', 'HeadersTooLargeMessage']),
  PosThrottled: transactionEnvelope(posErrors, ['ErrorMessage', 'TokenRateLimitedMessage']),
};

/** An endpoint as answered: the secret only in the answers of create and rotate (and not in a replay of a create). */
function webhookEndpoint(secret: 'always' | 'unless replayed' | 'never') {
  const fields = plain(webhookEndpointCreate.properties) as Record<string, any>;
  const withSecret = secret !== 'never';
  return {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'url', 'event_types', 'description', 'status', ...(secret === 'always' ? ['secret'] : []), 'created_at', 'updated_at'],
    properties: {
      id: { type: 'integer', minimum: 1 },
      url: { type: 'string', maxLength: 2048 },
      event_types: fields.event_types,
      description: fields.description,
      status: fields.status,
      ...(withSecret
        ? {
            secret: {
              type: 'string',
              pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
              description:
                secret === 'always'
                  ? 'Shown in this answer only: keep it to verify deliveries.'
                  : 'Shown in this answer only (absent from a replayed one): keep it to verify deliveries.',
            },
          }
        : {}),
      created_at: { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' },
      updated_at: { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' },
    },
  };
}

/**
 * An operation `operations` does not describe yet: what its row says, and its success as its
 * method implies (a core read's 200 and 304, else 200), the body any JSON. Its entry above, once
 * written, says more.
 */
function undescribed(route: Route): Operation {
  if (route.method === 'GET' && route.host === 'core') return { success: read(route.summary) };
  return { success: { 200: { description: route.summary, headers: headersOf(route.host), content: { 'application/json': { schema: {} } } } } };
}

/** The successes of a route whose row names a count: their ETag in two parts. */
function withCountedEtag(route: Route, success: Record<string, any>): Record<string, object> {
  const count = route.countInEtag;
  if (!count) return success;
  return Object.fromEntries(
    Object.entries(success).map(([status, response]) => [
      status,
      response.headers?.ETag ? { ...response, headers: { ...response.headers, ETag: countedEtagHeader(count) } } : response,
    ]),
  );
}

function pathItemOperation(route: Route) {
  const operation = operations[route.operationId] ?? undescribed(route);
  const responses: Record<string, object> = withCountedEtag(route, operation.success);
  for (const status of errorStatuses(route, operation)) responses[String(status)] = errorResponse(route, status, operation);
  for (const status of GATEWAY_STATUSES) responses[String(status)] = gatewayErrorResponse(route.host, status, operation.errorDescriptions?.[status]);
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `Needs a token of scope ${route.scope} (or all); any other answers 403.`,
    'x-tillgate-scope': route.scope,
    parameters: parametersOf(route, operation),
    ...(route.body ? { requestBody: requestBody(route, operation.bodyNote) } : {}),
    responses,
  };
}

const serverVariable = { core: 'base_url', pos: 'pos_base_url' } as const satisfies Record<HostId, string>;

/** Recorded responses of the test suite, by `operationId status` (see examples.ts). */
type Examples = Record<string, { readonly value: unknown; readonly summary?: string }>;

/** Each JSON response gets the example recorded for its operation and status, when there is one. */
function withExamples(route: Route, responses: Record<string, any>, examples: Examples) {
  for (const [status, response] of Object.entries(responses)) {
    const example = examples[`${route.operationId} ${status}`] ?? serverFault(route, Number(status));
    const media = response.content?.['application/json'];
    if (example && media) media.examples = { recorded: { summary: example.summary ?? 'A real response', value: example.value } };
  }
  return responses;
}

/**
 * A 500 or 503 of an operation whose fault the suite did not inject: rendered by the functions'
 * own envelope code (functions/http/hosts), as every operation answers it.
 */
function serverFault(route: Route, status: number): Examples[string] | undefined {
  const requestId = '0b7c2e4a-9d1f-4c3b-8a6e-5f2d1c0b9a87';
  const [code, message] =
    status === 500
      ? (['internal_error', `Internal server error; quote request id ${requestId} to support`] as const)
      : status === 503
        ? (['service_unavailable', 'The service is temporarily unavailable; retry after the Retry-After delay'] as const)
        : [];
  if (!code) return undefined;
  const value = route.host === 'core' ? coreErrorBody([{ message }]) : posErrorBody(route.till, code, [{ message }], requestId);
  return { summary: 'As every operation of this host answers it (functions/http/hosts)', value };
}

/** The component schemas a document refers to, following references inside them too. */
function usedSchemas(document: object): Record<string, unknown> {
  const used = new Set<string>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string') {
          const name = /^#\/components\/schemas\/([^/]+)/.exec(inner)?.[1];
          if (name && !used.has(name)) {
            used.add(name);
            visit((schemas as Record<string, unknown>)[name]);
          }
        } else visit(inner);
      }
    }
  };
  visit(document);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
}

/**
 * One OpenAPI 3.1 document per host, each with its own `servers`, so that a linter, a mock or
 * validating proxy, or a documentation viewer works on it as it is.
 */
export function openApiDocument(hostId: HostId, examples: Examples = {}) {
  const host = hosts[hostId];
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes.filter((r) => r.host === hostId)) {
    const operation = structuredClone(pathItemOperation(route));
    paths[route.path] ??= {
      description: `Other methods than ${methodsByPath(hostId).get(route.path)!.join(', ')} answer 405 with an Allow header listing these, in this host's error shape.`,
    };
    paths[route.path]![route.method.toLowerCase()] = { ...operation, responses: withExamples(route, operation.responses, examples) };
  }
  const variable = serverVariable[hostId];
  const document = {
    openapi: '3.1.0',
    info: {
      title: `tillgate ${hostId} host`,
      version: '1.0.0',
      description:
        `${host.description} Routes under ${host.versionPrefix}. Every operation needs a token whose scope allows it ` +
        `(x-tillgate-scope: pos, core; a token of scope all passes both), else 403. Unknown paths answer 404, a known path with ` +
        `a method it does not serve 405 with Allow, throttled requests 429 (the stage, or this token's own limit), and API Gateway ` +
        `answers 502 (function failed) or 504 (integration timeout) itself, all in this host's error shape.`,
      license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
    },
    servers: [
      {
        url: `{${variable}}`,
        description: `The ${hostId} host: the stack output ${hostId === 'core' ? 'CoreBaseUrl' : 'PosBaseUrl'}, or npm start locally.`,
        variables: { [variable]: { default: `http://127.0.0.1:${host.localPort}` } },
      },
    ],
    security: [{ token: [] }],
    paths,
  };
  return {
    ...document,
    components: {
      securitySchemes: {
        token: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Auth-Token',
          description:
            'A token issued by the token tool (tg_ and 43 base64url characters), bound to one account and one scope: pos, core or all. ' +
            'Each operation says the scope it needs (x-tillgate-scope).',
        },
      },
      schemas: usedSchemas(document),
    },
  };
}
