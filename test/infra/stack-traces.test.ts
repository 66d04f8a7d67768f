import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { routes } from '#functions/routes';
import { tables } from '#functions/tables';
import { findBundles } from '../../infra/bundles.ts';
import { PROJECT_ROOT } from '../../infra/tillgate-stack.ts';
import { toProxyEvent } from '../../local/server.ts';

/**
 * What on-call reads after a 5xx, from the bundle `cdk deploy` ships, run as Lambda runs it: no
 * NODE_OPTIONS (no runtime source maps). The bundle keeps its function names, and the logged
 * stack is at TypeScript positions (functions/runtime/original-stack.ts reads the shipped map).
 * The fault is real: the function's tables do not exist in DynamoDB Local, which answers
 * ResourceNotFoundException, a client error the service does not expect and so a 500.
 */
const cdkOut = path.join(PROJECT_ROOT, 'cdk.out');

const HARNESS = `
const { handler } = await import(process.env.BUNDLE);
const context = { awsRequestId: 'stack-trace-test', functionName: 'getEvent', getRemainingTimeInMillis: () => 10000 };
const result = await handler(JSON.parse(process.env.EVENT), context);
console.log(JSON.stringify({ result }));
`;

describe('a 5xx logged by a shipped bundle', () => {
  it('names the functions and the TypeScript files and lines it passed through', () => {
    const route = routes.find((r) => r.operationId === 'getEvent')!;
    const event = toProxyEvent({
      route,
      target: '/v1.0/events/1',
      rawHeaders: ['X-Auth-Token', `tg_${'s'.repeat(43)}`],
      body: Buffer.alloc(0),
      requestId: 'stack-trace-test',
      sourceIp: '127.0.0.1',
      protocol: 'HTTP/1.1',
    });
    const missingTables = Object.fromEntries(Object.values(tables).map((spec) => [spec.envVar, `no-such-table-${spec.envVar.toLowerCase()}`]));
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', HARNESS], {
      env: {
        PATH: process.env.PATH ?? '',
        ...missingTables,
        BUNDLE: findBundles(cdkOut).getEvent!,
        EVENT: JSON.stringify(event),
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        AWS_REGION: 'local',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        POWERTOOLS_METRICS_DISABLED: 'true',
        TOKEN_CACHE_SECONDS: '0',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    // Powertools writes ERROR lines to stderr, INFO to stdout, as Lambda's console does.
    const lines = `${run.stdout}\n${run.stderr}`
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    expect(lines.find((line) => line.result)?.result.statusCode).toBe(500);
    const failure = lines.find((line) => line.message === 'request failed');
    expect(failure, run.stderr).toBeDefined();
    const stack: string = failure.error.stack;
    // Every frame of the bundle is at its source position; none is left at index.mjs.
    expect(stack).not.toMatch(/index\.mjs:\d+/);
    expect(stack).toMatch(/\(node_modules\/@aws-sdk\/[^)]+\.js:\d+:\d+\)/);
    // Our own frames, by their function names and files (the name comes from the bundle, kept
    // unminified; the position from the map).
    expect(stack).toMatch(/at async findApiKey \(functions\/data\/api-keys\.ts:\d+:\d+\)/);
    expect(stack).toMatch(/at async client\.send \(functions\/runtime\/clients\.ts:\d+:\d+\)/);
    expect(failure.error.location).toMatch(/^node_modules\/@aws-sdk\/.+\.js:\d+$/);
  });
});
