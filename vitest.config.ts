import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
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
  },
});
