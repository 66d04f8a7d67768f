import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { requestSchemas } from '#http/schemas';
import { tables } from '#functions/tables';
import { workers } from '#functions/workers';
import { findBundles } from '../../infra/bundles.ts';
import { PROJECT_ROOT } from '../../infra/tillgate-stack.ts';

/**
 * `npm test` runs `cdk synth` before vitest; these tests read what it built (cdk.out), the same
 * bundles `cdk deploy` uploads and the end-to-end suite runs with TILLGATE_HANDLERS=bundles.
 */
const cdkOut = path.join(PROJECT_ROOT, 'cdk.out');

describe('findBundles', () => {
  it('maps every route and every worker of the tables to its built ESM bundle', () => {
    const bundles = findBundles(cdkOut);
    expect(Object.keys(bundles).sort()).toEqual([...routes.map((r) => r.operationId), ...workers.map((w) => w.name)].sort());
    for (const [operationId, file] of Object.entries(bundles)) {
      expect(path.isAbsolute(file), operationId).toBe(true);
      expect(file).toMatch(/[/\\]asset\.[0-9a-f]{64}[/\\]index\.mjs$/);
      expect(statSync(file).size, operationId).toBeGreaterThan(1000);
      expect(statSync(`${file}.map`).size, `${operationId} source map`).toBeGreaterThan(0);
    }
    expect(new Set(Object.values(bundles)).size).toBe(routes.length + workers.length);
  });

  it('gives bundles that load on Node.js 24 and export a handler', async () => {
    // The bundles read their table names when they load, as in Lambda.
    for (const spec of Object.values(tables)) process.env[spec.envVar] ??= `bundle-load-check-${spec.envVar}`;
    for (const file of Object.values(findBundles(cdkOut))) {
      const module = (await import(file)) as { handler?: unknown };
      expect(typeof module.handler, file).toBe('function');
    }
    // Twenty bundles of about 1 MiB each, through vitest's module loader on a shared two-core machine.
  }, 120_000);

  it('carries only the validators of its own route (and ajv-formats only where a format is checked)', () => {
    // A route's bundle carries the validators its row names; a worker's none.
    const expected = Object.fromEntries(
      routes.map((route) => [route.operationId, [route.body?.schema, route.params, route.query].filter((name) => name !== undefined).sort()]),
    );
    /** The rows whose body schema checks a format (the void's dates). */
    const withFormats = routes
      .filter((route) => route.body && JSON.stringify(requestSchemas[route.body.schema]).includes('"format"'))
      .map((route) => route.operationId);
    for (const [operationId, file] of Object.entries(findBundles(cdkOut))) {
      const text = readFileSync(file, 'utf8');
      // Each generated module ends in `export default { name: "…", validate, schema }`.
      const carried = [...text.matchAll(/name:"([A-Za-z]+)",validate(?::\w+)?,schema:/g)].map((match) => match[1]).sort();
      expect(carried, operationId).toEqual(expected[operationId] ?? []);
      // The till's bodies carry a void's fields, with their date formats.
      expect(text.includes('fullFormats'), `${operationId} bundles ajv-formats`).toBe(withFormats.includes(operationId));
    }
  });

  it('explains what to do when nothing has been synthesized', () => {
    expect(() => findBundles(path.join(PROJECT_ROOT, 'no-such-cdk-out'))).toThrow(/npm run synth/);
  });
});

describe("the bench's cold-start environments (scripts/bench/cold-start.ts)", () => {
  it("resolves every route's environment from the template: tables, secrets, keys and buckets to their local stand-ins, queues left out", async () => {
    const { functionEnvironment } = await import('../../scripts/bench/cold-start.ts');
    const { buckets } = await import('#functions/buckets');
    const { keys, secrets } = await import('#functions/secrets');
    const localValues = [...Object.values(secrets), ...Object.values(keys)].map((spec) => spec.localEnvVar);
    const standIns = [...localValues, ...Object.values(buckets).map((bucket) => bucket.envVar), 'S3_ENDPOINT'];
    const saved = Object.fromEntries(standIns.map((name) => [name, process.env[name]]));
    for (const name of standIns) process.env[name] = `local-${name}`;
    try {
      const names = Object.fromEntries(Object.keys(tables).map((id) => [id, `bench-${id}`])) as Record<keyof typeof tables, string>;
      for (const route of routes) {
        // It used to stop the whole bench at the first token it could not resolve (a bucket, a KMS key).
        const environment = functionEnvironment(cdkOut, route.operationId, names);
        for (const [name, value] of Object.entries(environment)) expect(typeof value, `${route.operationId} ${name}`).toBe('string');
        for (const table of Object.keys(route.tables)) {
          expect(environment[tables[table as keyof typeof tables].envVar], `${route.operationId} ${table}`).toBe(`bench-${table}`);
        }
      }
      const exported = functionEnvironment(cdkOut, 'getExport', names);
      expect(exported).toMatchObject({ EXPORTS_BUCKET: 'local-EXPORTS_BUCKET', S3_ENDPOINT: 'local-S3_ENDPOINT' });
      expect(functionEnvironment(cdkOut, 'createWebhookEndpoint', names)).toMatchObject({ TILLGATE_WEBHOOK_SECRETS_KEY: 'local-TILLGATE_WEBHOOK_SECRETS_KEY' });
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
