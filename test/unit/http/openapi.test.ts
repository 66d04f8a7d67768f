import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { checkParameters } from '../../../functions/http/validation.ts';
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

describe('the OpenAPI document says what the gateway can answer', () => {
  it.each(routes.map((route) => [route.operationId, route] as const))(
    '%s documents 429 (with Retry-After), 502 and 504 from API Gateway, in its host error shape',
    (_, route) => {
      const responses = (document.paths as any)[route.path][route.method.toLowerCase()].responses;
      for (const status of ['429', '502', '504']) {
        expect(responses[status].content['application/json'].schema.$ref, status).toBe(
          `#/components/schemas/${route.host === 'core' ? 'CoreError' : 'PosError'}`,
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

  it.each(['1', '42', '9007199254740991', '1000000000000000'])('accepts %s', (id) => {
    for (const schema of schemas) expect(ajv.validate(schema, id), id).toBe(true);
    expect(serverAccepts(id)).toBe(true);
  });

  it.each(['01', '0', '00', '-1', '+1', '1.0', '1e3', '0x10', ' 1', '9007199254740992', '9999999999999999', '12345678901234567', ''])(
    'refuses %j, as the server does (400)',
    (id) => {
      for (const schema of schemas) expect(ajv.validate(schema, id), id).toBe(false);
      expect(serverAccepts(id)).toBe(false);
    },
  );

  it('agrees with the server on generated ids (seed printed)', () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    console.log(`openapi id schema: seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/unit/http/openapi.test.ts)`);
    const validate = ajv.compile(schemas[0]);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.bigInt({ min: 0n, max: 2n ** 54n }).map(String),
          fc.bigInt({ min: 2n ** 52n, max: 2n ** 53n + 10n }).map(String),
          fc.stringMatching(/^[0-9]{1,18}$/),
          fc.string({ maxLength: 20 }),
        ),
        (id) => validate(id) === serverAccepts(id),
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
