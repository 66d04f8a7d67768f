import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Two cores: DynamoDB Local needs one of them.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    env: {
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      TOKEN_CACHE_SECONDS: '0',
      AWS_REGION: 'local',
    },
    reporters: ['default', ['json', { outputFile: 'reports/vitest.json' }]],
    projects: [
      { extends: true, test: { name: 'source', include: ['test/**/*.test.ts'] } },
      {
        // The HTTP suite again, served by the bundles `cdk synth` built: what ships is what was tested.
        extends: true,
        test: { name: 'bundles', include: ['test/e2e/**/*.test.ts'], env: { TILLGATE_HANDLERS: 'bundles' } },
      },
    ],
  },
});
