import '../support/webhooks/env.ts';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import newman, { type RunFailure, type RunSummary } from 'newman';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken } from '../../functions/http/tokens.ts';
import type { HostId } from '../../functions/routes.ts';
import type { LocalApi } from '../../local/server.ts';
import type { LocalWebhooks } from '../../local/webhooks.ts';
import { newAccount } from '../support/accounts.ts';
import { startTestApi } from '../support/local-api.ts';
import { startTestWebhooks } from '../support/local-webhooks.ts';
import { startReceiver, type Receiver } from '../support/webhooks/receiver.ts';

/**
 * The contract run (issue 23): Portman, a maintained third-party tool, turns each OpenAPI
 * document (openapi/core.json, openapi/pos.json) into a Postman collection with contract tests on
 * every operation and the variations the document says must be refused, configured by
 * contract/portman.<host>.json; Newman runs it against the local API on 127.0.0.1. Every
 * assertion must pass. See docs/testing.md, "The contract run".
 */
const ROOT = resolve(import.meta.dirname, '../..');
const REPORTS = join(ROOT, 'reports', 'contract');
const PORTMAN = createRequire(import.meta.url).resolve('@apideck/portman/bin/portman');

/** Floors, so that a configuration that silently stops generating requests fails the run. */
const AT_LEAST: Record<HostId, { requests: number; assertions: number }> = {
  core: { requests: 265, assertions: 3475 },
  pos: { requests: 59, assertions: 728 },
};

let api: LocalApi;
let webhooks: LocalWebhooks;
let receiver: Receiver;
let variables: Record<string, string>;
let tokensOfOtherScope: Record<HostId, string>;
const collections = {} as Record<HostId, object>;

beforeAll(async () => {
  [api, webhooks, receiver] = await Promise.all([startTestApi(), startTestWebhooks(), startReceiver()]);
  const account = await newAccount();
  variables = { token: account.token, receiverUrl: receiver.url };
  const [core, pos] = await Promise.all([
    issueToken(account.accountId, 'contract run, core scope', 'core'),
    issueToken(account.accountId, 'contract run, pos scope', 'pos'),
  ]);
  collections.core = await generate('core');
  collections.pos = await generate('pos');
  tokensOfOtherScope = { core: pos.token, pos: core.token };
}, 180_000);

afterAll(async () => {
  await webhooks?.close();
  await receiver?.close();
  await api?.close();
});

/**
 * Portman's CLI on the committed document and configuration. It writes working files into its
 * working directory (tmp/) and reads the configuration's `file:` scripts relative to it, so it
 * runs in a fresh temporary directory holding only a link to contract/; the collection is kept
 * in reports/contract/ (git-ignored) for inspection. Nothing is fetched: the document is a local
 * file and no Postman upload is asked for.
 */
async function generate(host: HostId): Promise<object> {
  const work = await mkdtemp(join(tmpdir(), `tillgate-portman-${host}-`));
  const output = join(REPORTS, `${host}.postman.json`);
  try {
    await mkdir(REPORTS, { recursive: true });
    await symlink(join(ROOT, 'contract'), join(work, 'contract'), 'dir');
    const args = [
      PORTMAN,
      ['--local', join(ROOT, 'openapi', `${host}.json`)],
      ['--portmanConfigFile', join(ROOT, 'contract', `portman.${host}.json`)],
      ['--postmanConfigFile', join(ROOT, 'contract', 'postman-config.json')],
      ['--output', output],
      ['--syncPostman', 'false'],
      ['--runNewman', 'false'],
    ].flat();
    // No PORTMAN_* variable of the caller's environment reaches the collection.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PORTMAN_') && !name.startsWith('POSTMAN_')));
    try {
      await promisify(execFile)(process.execPath, args, { cwd: work, env, maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`Portman failed for ${host}:\n${stdout}\n${stderr}`);
    }
    return JSON.parse(await readFile(output, 'utf8'));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

interface Outcome {
  summary: RunSummary;
  offHost: string[];
}

/** Newman on one collection, with the host's base URL and the run's tokens; every request must go to 127.0.0.1. */
async function runCollection(host: HostId): Promise<Outcome> {
  const values = { ...variables, baseUrl: api.urls[host], coreBaseUrl: api.urls.core, otherScopeToken: tokensOfOtherScope[host] };
  const offHost: string[] = [];
  const summary = await new Promise<RunSummary>((done, fail) => {
    newman
      .run(
        {
          collection: collections[host],
          environment: { values: Object.entries(values).map(([key, value]) => ({ key, value })) },
          reporters: [],
          timeoutRequest: 15_000,
          timeoutScript: 20_000,
          ignoreRedirects: true,
          insecure: false,
        },
        (error, result) => (error ? fail(error) : done(result)),
      )
      .on('request', (_error, { request }) => {
        if (request.url.getHost() !== '127.0.0.1') offHost.push(request.url.toString());
      });
  });
  return { summary, offHost };
}

function report(host: HostId, { summary }: Outcome): string {
  const { stats, failures, timings } = summary.run;
  const lines = [
    `contract run, ${host} host: ${stats.requests.total} requests, ${stats.assertions.total} assertions, ${failures.length} failures ` +
      `(${stats.assertions.failed} assertions, ${stats.prerequestScripts.failed + stats.testScripts.failed} scripts), ${((timings.completed - timings.started) / 1000).toFixed(1)} s`,
    ...failures.map((failure: RunFailure) => `  ✗ ${failure.source?.name ?? '(collection)'} — ${failure.error.test ?? failure.at}: ${failure.error.message}`),
  ];
  return lines.join('\n');
}

describe.each(['core', 'pos'] as const)('the %s document, run by Portman and Newman', (host) => {
  it('passes every contract test and variation, on 127.0.0.1 only', async () => {
    const outcome = await runCollection(host);
    const text = report(host, outcome);
    console.log(text);
    const { stats, failures } = outcome.summary.run;
    expect(outcome.offHost).toEqual([]);
    expect(failures.length, text).toBe(0);
    expect(stats.requests.total).toBeGreaterThanOrEqual(AT_LEAST[host].requests);
    expect(stats.assertions.total).toBeGreaterThanOrEqual(AT_LEAST[host].assertions);
  }, 300_000);
});
