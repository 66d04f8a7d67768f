import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { checkBody, checkParameters } from '../../../functions/http/validation.ts';
import { validators } from '../../../functions/http/schemas/all.generated.ts';
import { describe, expect, it } from 'vitest';
import { hosts, routes, type HostId } from '../../../functions/routes.ts';
import { openApiDocument } from '../../../openapi/document.ts';

/** Both hosts' documents side by side, so a route's operation is found in its own host's document. */
const examples = JSON.parse(readFileSync('openapi/examples.json', 'utf8'));
const documents = { core: openApiDocument('core', examples), pos: openApiDocument('pos', examples) } as Record<HostId, any>;
const document = { paths: { ...documents.core.paths, ...documents.pos.paths } };
const operationOf = (route: (typeof routes)[number]) => documents[route.host].paths[route.path]?.[route.method.toLowerCase()];

describe('the OpenAPI documents', () => {
  it.each(Object.keys(hosts))('openapi/%s.json is current (run `npm run openapi` after changing routes or schemas)', (host) => {
    expect(JSON.parse(readFileSync(`openapi/${host}.json`, 'utf8'))).toEqual(documents[host as HostId]);
  });

  it('have an operation for every route, on its host, and a route for every operation', () => {
    for (const route of routes) expect(operationOf(route)?.operationId, route.operationId).toBe(route.operationId);
    const documented = Object.values(documents).flatMap((d) =>
      Object.entries<any>(d.paths).flatMap(([path, item]) =>
        Object.entries<any>(item)
          .filter(([key]) => key !== 'description')
          .map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
      ),
    );
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort());
  });

  it('each have their own servers', () => {
    expect(documents.core.servers[0].url).toBe('{base_url}');
    expect(documents.pos.servers[0].url).toBe('{pos_base_url}');
  });

  it('show a real response as the example of every JSON response', () => {
    const missing = routes.flatMap((route) =>
      Object.entries<any>(operationOf(route).responses)
        .filter(([, response]) => response.content?.['application/json'] && !response.content['application/json'].examples)
        .map(([status]) => `${route.operationId} ${status}`),
    );
    expect(missing).toEqual([]);
  });

  it('pass @redocly/cli lint with its recommended rules (warnings kept only with a reason in redocly.yaml)', () => {
    const output = execFileSync('node_modules/.bin/redocly', ['lint', '--format=stylish'], {
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    expect(output).not.toMatch(/error/i);
  }, 60_000);

  it('bound every string a client sends: each parameter and request body string has a maxLength', () => {
    /** JSON pointers of the strings without a bound, under one schema (enums and consts are bounded). */
    const unbounded = (schema: any, where: string): string[] => {
      if (!schema || typeof schema !== 'object') return [];
      if (Array.isArray(schema)) return schema.flatMap((item, i) => unbounded(item, `${where}/${i}`));
      const types = [schema.type].flat();
      const own = types.includes('string') && schema.maxLength === undefined && schema.enum === undefined && schema.const === undefined ? [where] : [];
      const inner = Object.entries(schema)
        .filter(([key]) => key !== 'examples' && key !== 'default' && key !== 'enum' && key !== 'const')
        .flatMap(([key, value]) => unbounded(value, `${where}/${key}`));
      return [...own, ...inner];
    };
    const found: string[] = [];
    let strings = 0;
    for (const route of routes) {
      const operation = operationOf(route);
      const where = `${route.method} ${route.path}`;
      for (const parameter of operation.parameters ?? []) {
        strings += 1;
        found.push(...unbounded(parameter.schema, `${where} ${parameter.in} ${parameter.name}`));
      }
      const body = operation.requestBody?.content?.['application/json']?.schema;
      if (body) found.push(...unbounded(body, `${where} body`));
    }
    expect(strings).toBeGreaterThan(routes.length);
    expect(found).toEqual([]);
    // The walk sees an unbounded string when there is one.
    expect(unbounded({ type: 'object', properties: { a: { type: ['string', 'null'] } } }, 'probe')).toEqual(['probe/properties/a']);
  });

  it("say the scope each operation needs (x-tillgate-scope, the route table's) and document 403 for it", () => {
    for (const route of routes) {
      const operation = operationOf(route);
      expect(operation['x-tillgate-scope'], route.operationId).toBe(route.scope);
      expect(operation.description).toContain(`scope ${route.scope}`);
      expect(operation.responses['403'].content['application/json'].schema.$ref).toBe(
        `#/components/schemas/${route.host === 'core' ? 'CoreError' : 'PosError'}`,
      );
    }
  });

  it('say on each path which methods it serves: the others answer 405 with Allow', () => {
    for (const route of routes) {
      const item = documents[route.host].paths[route.path];
      const served = routes
        .filter((r) => r.host === route.host && r.path === route.path)
        .map((r) => r.method)
        .sort();
      expect(item.description).toContain(`Other methods than ${served.join(', ')} answer 405`);
    }
  });

  it('document 401 and 500 and 503 for every operation, in the error shape of its host', () => {
    for (const route of routes) {
      const responses = operationOf(route).responses;
      for (const status of ['401', '500', '503']) {
        expect(responses[status].content['application/json'].schema.$ref).toBe(`#/components/schemas/${route.host === 'core' ? 'CoreError' : 'PosError'}`);
      }
    }
  });
});

/** What a client generated from the documents needs (issue 23): every point was a finding of a client built from them. */
describe('the OpenAPI documents type a client naturally', () => {
  const operations = routes.map((route) => ({ route, operation: operationOf(route) }));

  it("give every request body an example that the server's own validator accepts", () => {
    for (const { route, operation } of operations.filter(({ route }) => route.body)) {
      const media = operation.requestBody.content['application/json'];
      const examples = Object.values<any>(media.examples ?? {});
      expect(examples.length, route.operationId).toBe(1);
      const body = structuredClone(examples[0].value);
      const resource = route.body!.root ? body[route.body!.root] : body;
      expect(() => checkBody(validators[route.body!.schema], resource, route.body!.root ?? ''), route.operationId).not.toThrow();
    }
  });

  it('leave the read-only and unchangeable fields out of request schemas, and name them in the description', () => {
    const create = operationOf(routes.find((r) => r.operationId === 'createCodeGenerator')!).requestBody.content['application/json'].schema.properties
      .code_generator;
    expect(Object.keys(create.properties)).not.toContain('id');
    expect(create.additionalProperties).toBe(false);
    expect(create.description).toContain('Sending id, account_id, created_at, updated_at, times_redeemed answers 422 naming the field');
    const text = JSON.stringify(operations.map(({ operation }) => operation.requestBody ?? null));
    expect(text).not.toContain('"not":{}');
  });

  it('type path ids and the limit and store_id query parameters as integers, redeemed as a boolean', () => {
    for (const { route, operation } of operations) {
      for (const parameter of operation.parameters.filter((p: any) => p.in === 'path' || p.in === 'query')) {
        const expected = { id: 'integer', event_id: 'integer', limit: 'integer', store_id: 'integer', redeemed: 'boolean', code: 'string', cursor: 'string' }[
          parameter.name as string
        ];
        expect(parameter.schema.type, `${route.operationId} ${parameter.name}`).toBe(expected);
      }
    }
  });

  it('declare If-None-Match on every GET (each documents its 304)', () => {
    for (const { route, operation } of operations.filter(({ route }) => route.method === 'GET')) {
      expect(
        operation.parameters.map((p: any) => p.name),
        route.operationId,
      ).toContain('If-None-Match');
      expect(operation.responses['304'], route.operationId).toBeDefined();
    }
  });

  it('declare no ETag on an error response', () => {
    for (const { route, operation } of operations) {
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (Number(status) >= 400) expect(response.headers?.ETag, `${route.operationId} ${status}`).toBeUndefined();
      }
    }
  });

  it('describe a 400 only with what the operation reads (no pos operation has a path id or an Idempotency-Key)', () => {
    for (const { route, operation } of operations.filter(({ route }) => route.host === 'pos')) {
      expect(operation.responses['400'].description, route.operationId).not.toMatch(/path|Idempotency-Key/);
    }
  });

  it("require a rotation's secret; a create's may be absent only from a replayed answer", () => {
    const schemas = documents.core.components.schemas;
    expect(schemas.WebhookEndpointWithSecret.properties.webhook_endpoint.required).toContain('secret');
    expect(schemas.WebhookEndpointCreated.properties.webhook_endpoint.required).not.toContain('secret');
  });

  it('type message_content per message_id and answer: a oneOf discriminated by message_id, each id mapped once', () => {
    const schemas = documents.pos.components.schemas;
    const items = (name: string) => schemas[name].properties.transaction.properties.display_messages.items;
    expect(items('VoidResponse').discriminator.propertyName).toBe('message_id');
    expect(items('VoidResponse').discriminator.mapping).toEqual({
      transaction_voided: '#/components/schemas/TransactionVoidedMessage',
      code_released: '#/components/schemas/CodeReleasedMessage',
    });
    expect(items('RedemptionConflict').discriminator.mapping.transaction_voided).toBe('#/components/schemas/TransactionVoidedRefusalMessage');
    for (const schema of Object.values<any>(schemas).filter((s) => s.properties?.message_id)) {
      expect(schema.properties.message_content.type).toBe('object');
      expect(schema.properties.message_content.additionalProperties).toBe(false);
      expect(schema.properties.message_id.const ?? schema.properties.message_id.enum).toBeDefined();
    }
  });
});

describe('the OpenAPI document says what the gateway can answer', () => {
  it.each(routes.map((route) => [route.operationId, route] as const))(
    '%s documents 429 (with Retry-After), 502 and 504 from API Gateway, in its host error shape',
    (_, route) => {
      const responses = (document.paths as any)[route.path][route.method.toLowerCase()].responses;
      for (const status of ['429', '502', '504']) {
        // The pos host's 429 may also be WAF's per-token answer, whose display message has no request id.
        const posSchema = status === '429' ? 'PosThrottled' : 'PosError';
        expect(responses[status].content['application/json'].schema.$ref, status).toBe(
          `#/components/schemas/${route.host === 'core' ? 'CoreError' : posSchema}`,
        );
        expect(Object.keys(responses[status].headers).sort(), status).toEqual(
          ['Cache-Control', 'Content-Type', 'X-Content-Type-Options', 'X-Request-Id', ...(status === '429' ? ['Retry-After'] : [])].sort(),
        );
        expect(responses[status].headers['Cache-Control'].schema, status).toEqual({ const: 'no-store' });
      }
    },
  );

  it('describes a 304 without Content-Type', () => {
    const notModified = (document.paths as any)['/v1.0/events/{id}'].get.responses['304'];
    expect(notModified.headers['Content-Type']).toBeUndefined();
    expect(notModified.headers.ETag).toBeDefined();
    expect(notModified.content).toBeUndefined();
  });
});

/**
 * A path id is documented as an integer (so that a generated client takes a number) while the
 * server reads text: what a client can send is the decimal text of a documented integer, and the
 * server must accept exactly that text and refuse every other.
 */
describe('the path id schema accepts exactly what the server accepts', () => {
  const ajv = new Ajv2020({ strict: false });
  const schemas = routes
    .filter((route) => route.path.includes('{id}'))
    .map((route) => (document.paths as any)[route.path][route.method.toLowerCase()].parameters.find((p: any) => p.name === 'id').schema);

  /** The server's rule, through the handler's own parameter reader: 400 or a number. */
  const serverAccepts = (text: string) => {
    try {
      checkParameters(validators.idPath, { id: text }, 'path');
      return true;
    } catch {
      return false;
    }
  };

  /** The text is how a client serialises a number the schema accepts (decimal, no sign, no leading zero). */
  const documentAllows = (schema: object, text: string) =>
    /^(0|[1-9][0-9]*)$/.test(text) && String(Number(text)) === text && ajv.validate(schema, Number(text));

  it('are integers in the documents', () => {
    for (const schema of schemas) expect(schema).toMatchObject({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
  });

  it.each(['1', '42', '9007199254740991', '1000000000000000'])('accepts %s', (id) => {
    for (const schema of schemas) expect(documentAllows(schema, id), id).toBe(true);
    expect(serverAccepts(id)).toBe(true);
  });

  it.each(['01', '0', '00', '-1', '+1', '1.0', '1e3', '0x10', ' 1', '9007199254740992', '9999999999999999', '12345678901234567', ''])(
    'refuses %j, as the server does (400)',
    (id) => {
      for (const schema of schemas) expect(documentAllows(schema, id), id).toBe(false);
      expect(serverAccepts(id)).toBe(false);
    },
  );

  it('agrees with the server on generated ids (seed printed)', () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    console.log(`openapi id schema: seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/unit/http/openapi.test.ts)`);
    const [schema] = schemas;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: 0n, max: 2n ** 54n }).map(String),
          fc.bigInt({ min: 2n ** 52n, max: 2n ** 53n + 10n }).map(String),
          fc.stringMatching(/^[0-9]{1,18}$/),
          fc.string({ maxLength: 20 }),
        ),
        (id) => documentAllows(schema, id) === serverAccepts(id),
      ),
      { seed, numRuns: 2000 },
    );
  });
});

describe('checkAgainstOpenApi', async () => {
  const { checkAgainstOpenApi } = await import('../../support/openapi.ts');
  const headers = (extra: Record<string, string> = {}) =>
    new Headers({
      'Content-Type': 'application/json; charset=utf-8',
      'X-Request-Id': 'r-1',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      'X-Runtime': '0.001000',
      ...extra,
    });
  const event = { event: { id: 1, type: 'transaction.voided', resource_id: 'S/1', created_at: '2026-11-21T00:00:00.000Z' } };

  it('accepts a response that matches', () => {
    expect(() => checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 200, headers: headers(), text: JSON.stringify(event) })).not.toThrow();
  });

  it('rejects an undocumented status, a missing header, and a body off its schema', () => {
    expect(() => checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 418, headers: headers(), text: '{}' })).toThrow(/not a documented status/);
    const noRequestId = headers();
    noRequestId.delete('X-Request-Id');
    expect(() => checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 200, headers: noRequestId, text: JSON.stringify(event) })).toThrow(
      /X-Request-Id/,
    );
    expect(() =>
      checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 200, headers: headers(), text: JSON.stringify({ event: { ...event.event, extra: 1 } }) }),
    ).toThrow(/additional properties/);
    expect(() => checkAgainstOpenApi('core', 'DELETE', '/v1.0/events/1', { status: 200, headers: headers(), text: '' })).toThrow(/single space|" "/);
    expect(() =>
      checkAgainstOpenApi('pos', 'POST', '/v2.0/voided_transactions', { status: 401, headers: headers(), text: '{"errors":[{"message":"x"}]}' }),
    ).toThrow(/body/);
  });
});
