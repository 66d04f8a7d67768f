import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/sequencer.ts';

/** Load tests that would starve the files running beside them of the one DynamoDB Local. */
const HEAVY = ['test/attack/codes/issuance-concurrency.test.ts', 'test/attack/codes/issuance-job-load.test.ts', 'test/attack/webhooks/soak.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // The local stack's invocation store, in every test process: the global setup loads it (through
    // local/stack.ts), which sets AWS_LAMBDA_MAX_CONCURRENCY, and the test processes inherit the
    // variable, with which Powertools refuses to log without the store ("InvokeStore is not available").
    setupFiles: ['local/invocation.ts'],
    pool: 'forks',
    sequence: { sequencer: LongestFirst },
    // Two cores: DynamoDB Local needs one of them.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    env: {
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      TOKEN_CACHE_SECONDS: '0',
      // The fuzzers send thousands of codes that do not exist with one token: the guessing limit
      // (120 a minute) would answer them 429. Its own tests set it back (test/e2e/tokens/guessing-*.test.ts).
      UNKNOWN_CODE_LIMIT: '1000000000',
      AWS_REGION: 'local',
    },
    reporters: ['default', ['json', { outputFile: 'reports/vitest.json' }]],
    projects: [
      {
        extends: true,
        // Everything but the HTTP suite, on the TypeScript sources.
        test: {
          name: 'source',
          include: ['test/**/*.test.ts'],
          exclude: [...HEAVY, 'test/e2e/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The HTTP suite, served by the bundles `cdk synth` built: what ships is what is tested
        // (test/support/bundles.ts refuses bundles older than functions/). TILLGATE_HANDLERS=source
        // runs it on the TypeScript sources instead, without a synth.
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          env: { TILLGATE_HANDLERS: process.env.TILLGATE_HANDLERS ?? 'bundles' },
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Saturates DynamoDB Local on purpose (tens of thousands of codes from concurrent callers):
        // run after everything else, alone, so that it cannot time out another file's requests.
        extends: true,
        test: { name: 'heavy', include: HEAVY, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
