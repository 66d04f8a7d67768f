import type { KnipConfig } from 'knip';
import { routes } from './functions/routes.ts';
import { workers } from './functions/workers.ts';

/**
 * Dead files, exports, types and dependencies (`npm run lint`). package.json's scripts, cdk.json's app and
 * vitest's configuration (test files, global setup) are read by knip's plugins; what they cannot see is
 * listed here.
 */
const config: KnipConfig = {
  entry: [
    // The Lambda handlers: the modules the route and worker tables name, read from the rows themselves.
    ...routes.map((route) => route.entry),
    ...workers.map((worker) => worker.entry),
    'infra/app.ts',
    // Started as child processes by path: the cold-start harness, the HTTP bench's servers, the outage test's server, the soak's stack.
    'scripts/bench/cold-harness.mjs',
    'scripts/bench/servers/{baseline,tillgate}.ts',
    'test/attack/database/serve-local.ts',
    'test/attack/webhooks/soak-stack.ts',
    // Run by hand, each named in a page: the README's receiver, docs/benchmarks.md's profilers,
    // docs/redemption.md's rate probe, the durability probe the outage tests cite.
    'scripts/webhook-receiver.mjs',
    'scripts/bench/{bundle-breakdown.mjs,warm-profile.ts}',
    'scripts/redemption-rate.ts',
    'scripts/dynamodb-local-durability.ts',
    // The typed client is a library for integrators: its exports are its API, used or not here.
    'client/index.ts',
  ],
  project: [
    'functions/**/*.ts',
    'infra/**/*.ts',
    'local/**/*.ts',
    'openapi/**/*.ts',
    'client/**/*.ts',
    'examples/**/*.ts',
    'scripts/**/*.{ts,mjs}',
    'test/**/*.ts',
  ],
  // Written by `npm run schemas`; checked against their sources by test/unit/http/validation.test.ts. The client's
  // types, written by `npm run openapi` (openapi-typescript's whole output, its unused exports too); checked by
  // test/unit/client/types.test.ts.
  ignore: ['functions/http/schemas/*.generated.ts', 'client/core.ts', 'client/pos.ts'],
  // The JDK that runs DynamoDB Local: preflight.mjs checks for it, npm does not install it.
  ignoreBinaries: ['java'],
  // Run by scripts/lint.mjs (\`npm run lint\`): knip sees the binaries of package.json's scripts, not of the files they start.
  // Portman is started by path (test/contract/portman.test.ts resolves its bin); tslib is required by Portman's
  // compiled code but listed only among its devDependencies, so it must sit beside it. Nothing imports either.
  ignoreDependencies: ['@biomejs/biome', '@apideck/portman', 'tslib'],
};

export default config;
