import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { routes, type HostId } from '../functions/routes.ts';
import { openApiChecker } from '../openapi/check.ts';
import { DEFAULT_SMOKE_STORE_ID, routesWithoutCheck } from './smoke/checks.ts';
import { formatOutcome, header, jsonReport, runSmoke, shown, summary } from './smoke/run.ts';

const usage = `Usage: npm run smoke -- --core-url URL --pos-url URL --token TOKEN [options]

Checks a deployed stage (or npm start) against the contract: every route of the route table
with real requests under the token's account, plus the gateway's own answers, each response
checked for its status, headers and body against openapi/core.json and openapi/pos.json.
What it makes is labelled "tillgate smoke run <time>" and cleaned up: its code generator ends
inactive, its events are acknowledged, its webhook endpoint is deleted.

Target (a flag wins over its variable):
  --core-url URL      The core host (stack output CoreBaseUrl)        SMOKE_CORE_URL
  --pos-url URL       The pos host (stack output PosBaseUrl)          SMOKE_POS_URL
  --token TOKEN       A token of scope all (npm run tokens -- create) SMOKE_TOKEN
  --webhook-url URL   Receives the run's webhook deliveries (answers  SMOKE_WEBHOOK_URL
                      POST with a 2xx); without it webhooks are skipped.

Options:
  --store-id N        store_id of the run's code generator (default ${DEFAULT_SMOKE_STORE_ID})
  --timeout S         Seconds to wait for one answer (default 30)
  --wait S            Seconds to wait for what may lag: index reads, deliveries (default 15)
  --json              Print one JSON document instead of lines
  --verbose, -v       Also show later pages, polls and the checks not run
  --help, -h

Exit status: 0 every check passed, 1 a check failed, 2 usage error.
`;

const fail = (message: string): never => {
  process.stderr.write(`smoke: ${message}\n\n${usage}`);
  process.exit(2);
};

let parsed;
try {
  parsed = parseArgs({
    strict: true,
    allowPositionals: false,
    options: {
      'core-url': { type: 'string' },
      'pos-url': { type: 'string' },
      token: { type: 'string' },
      'webhook-url': { type: 'string' },
      'store-id': { type: 'string' },
      timeout: { type: 'string' },
      wait: { type: 'string' },
      json: { type: 'boolean', default: false },
      verbose: { type: 'boolean', short: 'v', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (error) {
  fail((error as Error).message);
}
const { values } = parsed!;
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const setting = (flag: string, variable: string) => {
  const value = (values as Record<string, unknown>)[flag] ?? process.env[variable];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};

function baseUrl(flag: string, variable: string, required: boolean): string | undefined {
  const raw = setting(flag, variable);
  if (raw === undefined) return required ? fail(`--${flag} (or ${variable}) is required`) : undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(`--${flag} is not a URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(`--${flag} must be an http:// or https:// URL, got ${url.protocol}`);
  if (url.search || url.hash || url.username || url.password) fail(`--${flag} must be a base URL without query, fragment or credentials`);
  return raw.replace(/\/+$/, '');
}

function seconds(flag: string, fallback: number): number {
  const raw = setting(flag, `SMOKE_${flag.toUpperCase()}`);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 600) fail(`--${flag} must be a number of seconds from 0 to 600, got ${JSON.stringify(raw)}`);
  return value;
}

const urls = { core: baseUrl('core-url', 'SMOKE_CORE_URL', true)!, pos: baseUrl('pos-url', 'SMOKE_POS_URL', true)! } satisfies Record<HostId, string>;
const token = setting('token', 'SMOKE_TOKEN') ?? fail('--token (or SMOKE_TOKEN) is required: a token of scope all of the stage (npm run tokens -- create)');
const webhookUrl = baseUrl('webhook-url', 'SMOKE_WEBHOOK_URL', false);
const storeIdText = setting('store-id', 'SMOKE_STORE_ID');
const storeId = storeIdText === undefined ? DEFAULT_SMOKE_STORE_ID : Number(storeIdText);
if (!Number.isSafeInteger(storeId) || storeId < 1) fail(`--store-id must be a positive integer, got ${JSON.stringify(storeIdText)}`);
if (urls.core === urls.pos) fail('--core-url and --pos-url are the same URL: the hosts are two APIs');

const unchecked = routesWithoutCheck(routes);
if (unchecked.length > 0) {
  process.stderr.write(
    `smoke: no check written for ${unchecked.map((route) => `${route.operationId} (${route.method} ${route.path})`).join(', ')}: ` +
      'only its token check runs (a 401 without a token). Write one in scripts/smoke/checks.ts to check what it does.\n',
  );
}

const documents = {
  core: JSON.parse(readFileSync(new URL('../openapi/core.json', import.meta.url), 'utf8')),
  pos: JSON.parse(readFileSync(new URL('../openapi/pos.json', import.meta.url), 'utf8')),
};

// The first Ctrl-C stops the checks and lets the cleanup run; a second one stops everything.
const interrupt = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupt.signal.aborted) process.exit(130);
    process.stderr.write(`\nsmoke: ${signal}: finishing the current request, then cleaning up (again to stop at once)\n`);
    interrupt.abort();
  });
}

const verbose = values.verbose;
const json = values.json;
let printedHeader = false;
const report = await runSmoke({
  urls,
  token,
  webhookUrl,
  storeId,
  timeoutMs: seconds('timeout', 30) * 1000,
  settleMs: seconds('wait', 15) * 1000,
  checker: openApiChecker(documents),
  signal: interrupt.signal,
  onOutcome: (outcome) => {
    if (json || !shown(outcome, verbose)) return;
    process.stdout.write(`${formatOutcome(outcome)}\n`);
  },
  onStart: (run) => {
    if (!json && !printedHeader) process.stdout.write(`${header(run)}\n`);
    printedHeader = true;
  },
});

process.stdout.write(json ? `${JSON.stringify(jsonReport(report), null, 2)}\n` : `\n${summary(report)}\n`);
process.exitCode = report.passed ? 0 : 1;
