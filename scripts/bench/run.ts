import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { hosts, routes } from '../../functions/routes.ts';
import { findBundles } from '../../infra/bundles.ts';
import { functionEnvironment, measureColdStarts } from './cold-start.ts';
import { measureRequests, type SendRaw } from './dynamodb-requests.ts';
import { measureHttp } from './http.ts';
import { startCountingProxy } from './proxy.ts';
import { buildReference, buildVariant, MINIFIED_BUILD, READABLE_BUILD, sameBuildAsCdk } from './references.ts';
import type { ColdArm } from './cold-start.ts';
import { formatTable, machine, writeReport, type Row } from './report.ts';
import { checkCoverage, mainScenarios as allMainScenarios, scenarios as allScenarios, type BenchContext, type HttpRequest } from './scenarios.ts';
import { callsFor } from './dynamodb-requests.ts';
import { measureWarm } from './warm-overhead.ts';
import { measureWebhooks } from './webhooks.ts';
import { measurePeak } from './peak.ts';
import { measureJobs } from './jobs.ts';
import { measureExports } from './exports.ts';
import { bundledWorkers, sourceWorkers } from '../../local/webhooks.ts';
import { startLocalStack } from '../../local/stack.ts';
import { createTillgate, type Tillgate } from '../../client/index.ts';

/**
 * `npm run bench`: builds what it measures (cdk synth for the functions' bundles, esbuild for the
 * references), starts its own DynamoDB Local with a counting proxy in front, and measures, each
 * beside its baseline in the same run:
 *   1. DynamoDB requests and capacity per operation, on the wire (dynamodb-requests.ts);
 *   2. cold start per route against a reference bundle (cold-start.ts);
 *   3. warm overhead of the middleware chain against a bare handler (warm-overhead.ts);
 *   4. HTTP throughput, errors and server CPU against a bare node:http server (http.ts).
 * Prints one table and writes the same rows to reports/bench.json.
 *
 *   5. webhooks: commit → arrival, deliveries per second (a burst, and 8 tills sustained), a hanging endpoint beside a healthy one (webhooks.ts).
 *   6. a promotion at a chain's peak: 50 tills on distinct codes of one promotion, on one multi-use code and on one
 *      budgeted promotion, each against 50 tills on codes of 50 promotions; the most-touched item's share, requests
 *      and capacity per redemption (peak.ts).
 *   7. issuance jobs: a job's codes per second against raw conditional puts, write units per code (jobs.ts).
 *   8. exports: rows per second and peak memory of an export of 100,000 and 1,000,000 codes, each beside the same
 *      reads without the upload (exports.ts).
 * BENCH_EXPORTS_ONLY=1: only the export rows (section 8); BENCH_EXPORT_SIZES=100000,1000000 (the default) sets the sizes.
 * BENCH_PEAK_ONLY=1: only the peak rows (section 6); no cdk synth (the peak runs the handlers from the sources).
 * BENCH_JOBS_ONLY=1: only the issuance job rows (section 7); no cdk synth (the worker runs from the sources).
 * BENCH_QUICK=1: fewer calls, runs and iterations, for iterating on the bench itself.
 * BENCH_WEBHOOKS_ONLY=1: only the webhook rows (section 5).
 * BENCH_SKIP_SYNTH=1: use the cdk.out already there.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const WORK = resolve(ROOT, 'reports/bench');
const quick = process.env.BENCH_QUICK === '1';
const settings = quick
  ? { calls: 20, coldRuns: 5, warmIterations: 1000, httpRequests: 150, httpRounds: 1, connections: 8 }
  : { calls: 50, coldRuns: 20, warmIterations: 5000, httpRequests: 300, httpRounds: 2, connections: 8 };
const coldRuns = Number(process.env.BENCH_COLD_RUNS ?? settings.coldRuns);
/** BENCH_COLD_VARIANTS=1: the cold-start arms of the NODE_OPTIONS / build decision (docs/benchmarks.md), besides the usual ones. */
const coldVariants = process.env.BENCH_COLD_VARIANTS === '1';
/** BENCH_ONLY=listEvents,getCode: only these operations' scenarios (for iterating; the table is partial). */
const only = process.env.BENCH_ONLY?.split(',');
const started = performance.now();
const log = (line: string) => console.log(line);
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;

checkCoverage();
const scenarios = allScenarios.filter((scenario) => !only || only.includes(scenario.operationId));
const mainScenarios = () => allMainScenarios().filter((scenario) => !only || only.includes(scenario.operationId));

const peakOnly = process.env.BENCH_PEAK_ONLY === '1';
const jobsOnly = process.env.BENCH_JOBS_ONLY === '1';
const exportsOnly = process.env.BENCH_EXPORTS_ONLY === '1';
if (process.env.BENCH_SKIP_SYNTH !== '1' && !peakOnly && !jobsOnly && !exportsOnly) {
  log("bench: cdk synth (the functions' bundles and template) …");
  const synth = spawnSync('cdk', ['synth', '--quiet'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (synth.status !== 0) throw new Error('bench: cdk synth failed');
}
const cdkOut = resolve(ROOT, 'cdk.out');
const bundles = peakOnly || jobsOnly || exportsOnly ? {} : findBundles(cdkOut);

// The in-process server counts and records; its client goes through the proxy. The token cache is
// on, long enough that no lookup falls inside a measured call.
let proxy!: Awaited<ReturnType<typeof startCountingProxy>>;
const stack = await startLocalStack({
  tablePrefix: 'bench-',
  functionsEndpoint: async (endpoint) => (proxy = await startCountingProxy(endpoint)).endpoint,
  environment: {
    AWS_REGION: 'local',
    TOKEN_CACHE_SECONDS: '3600',
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    // The local stack's webhook setting: receivers on 127.0.0.1 (section 5).
    TILLGATE_LOCAL_WEBHOOKS: 'true',
  },
  api: { log: () => undefined },
});
const names = stack.tableNames;
const api = stack.api!;
log(`bench: DynamoDB Local (in memory) on ${stack.dynamodbEndpoint}, counting proxy on ${proxy.endpoint} (${elapsed()})`);
const { issueToken, accountForToken } = await import('../../functions/http/tokens.ts');
// The same module instance the in-process handlers draw their ids from.
const ids = await import('../../functions/data/ids.ts');

let exitCode = 0;
try {
  const accountId = 4242;
  const { token } = await issueToken(accountId, 'bench', 'all');
  await accountForToken(token);
  let serial = 0;
  /** The accounts of freshToken's tokens: a cold recording's new token stays in the request's account. */
  const freshAccounts = new Map<string, number>();
  const send: SendRaw = async (request) => {
    const host = Object.values(hosts).find((h) => request.path.startsWith(`${h.versionPrefix}/`));
    if (!host) throw new Error(`bench: no host serves ${request.path}`);
    const response = await fetch(`${api.urls[host.id]}${request.path}`, { method: request.method, headers: request.headers, body: request.body });
    return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  };
  /** The typed clients that make the scenarios' state, one per token; no retry (a failure stops the bench). */
  const clients = new Map<string, Tillgate>();
  const context: BenchContext = {
    accountId,
    token,
    unique: () => `${started.toString(36).replace('.', '')}-${(serial++).toString(36)}`,
    freshToken: async () => {
      const account = accountId + 1 + serial++;
      const { token: fresh } = await issueToken(account, 'bench fresh account', 'all');
      freshAccounts.set(fresh, account);
      return fresh;
    },
    client: (asToken = token) => {
      let client = clients.get(asToken);
      if (!client) clients.set(asToken, (client = createTillgate({ coreUrl: api.urls.core, posUrl: api.urls.pos, token: asToken, retry: { retries: 0 } })));
      return client;
    },
  };

  const webhookRows = async () => {
    log(`bench: webhooks (${elapsed()}) …`);
    return measureWebhooks({
      api,
      dynamodbEndpoint: proxy.endpoint,
      tableNames: names,
      loadWorker: bundledWorkers(bundles),
      freshToken: context.freshToken,
      events: quick ? 50 : 200,
      burst: quick ? 200 : 500,
      sustainSeconds: quick ? 10 : 30,
      log,
    });
  };
  if (process.env.BENCH_WEBHOOKS_ONLY === '1') {
    const rows = await webhookRows();
    const date = new Date();
    writeReport(resolve(ROOT, 'reports/bench-webhooks.json'), rows, date);
    log(`tillgate bench (webhooks only), ${date.toISOString()}, ${machine()}`);
    log(formatTable(rows));
    throw Object.assign(new Error('done'), { done: true });
  }

  const peakRows = async () => {
    log(`bench: a promotion at a chain's peak (${elapsed()}) …`);
    return measurePeak({
      context,
      proxy,
      tills: 50,
      // Four arms, each warmed up first: 4 × rounds × perRound measured redemptions, in pairs
      // of rounds (forward, then backward).
      perRound: quick ? 150 : 250,
      rounds: quick ? 4 : 6,
      log,
      asideTables: [names.apiKeys, names.counters],
    });
  };
  const jobRows = async () => {
    log(`bench: issuance jobs (${elapsed()}) …`);
    return measureJobs({
      api,
      proxy,
      dynamodbEndpoint: proxy.endpoint,
      tableNames: names,
      loadWorker: jobsOnly ? sourceWorkers : bundledWorkers(bundles),
      freshToken: context.freshToken,
      codes: quick ? 2000 : 5000,
      rounds: quick ? 2 : 4,
      log,
    });
  };
  if (jobsOnly) {
    const rows = await jobRows();
    const date = new Date();
    writeReport(resolve(ROOT, 'reports/bench-jobs.json'), rows, date);
    log(`tillgate bench (issuance jobs only), ${date.toISOString()}, ${machine()}`);
    log(formatTable(rows));
    throw Object.assign(new Error('done'), { done: true });
  }
  const exportRows = async () => {
    log(`bench: exports (${elapsed()}) …`);
    return measureExports({
      context,
      dynamodbEndpoint: stack.dynamodbEndpoint,
      codesTable: names.codes,
      sizes: (process.env.BENCH_EXPORT_SIZES ?? (quick ? '20000' : '100000,1000000')).split(',').map(Number),
      log,
    });
  };
  if (exportsOnly) {
    const rows = await exportRows();
    const date = new Date();
    writeReport(resolve(ROOT, 'reports/bench-exports.json'), rows, date);
    log(`tillgate bench (exports only), ${date.toISOString()}, ${machine()}`);
    log(formatTable(rows));
    throw Object.assign(new Error('done'), { done: true });
  }
  if (peakOnly) {
    const rows = await peakRows();
    const date = new Date();
    writeReport(resolve(ROOT, 'reports/bench-peak.json'), rows, date);
    log(`tillgate bench (peak only), ${date.toISOString()}, ${machine()}`);
    log(formatTable(rows));
    throw Object.assign(new Error('done'), { done: true });
  }

  log(`bench: DynamoDB requests and capacity, ${settings.calls} calls per scenario …`);
  const counted = await measureRequests({
    scenarios,
    mainScenarios: mainScenarios(),
    context,
    proxy,
    send,
    calls: settings.calls,
    withFreshToken: async (request: HttpRequest) => {
      const account = freshAccounts.get(request.headers['X-Auth-Token'] ?? '') ?? accountId;
      return { ...request, headers: { ...request.headers, 'X-Auth-Token': (await issueToken(account, 'bench cold', 'all')).token } };
    },
    countersTable: names.counters,
    blockSize: Number(process.env.ID_BLOCK_SIZE ?? 100),
    nextId: ids.nextId,
    discardIdBlock: ids.discardIdBlock,
  });
  for (const line of counted.details) log(`  ${line}`);

  log(`bench: building the reference bundles (${elapsed()}) …`);
  const references: Record<string, string> = {};
  for (const [operationId, plan] of counted.coldPlans) references[operationId] = await buildReference(plan, resolve(WORK, 'references'));
  const check = await sameBuildAsCdk(routes[0]!.entry, bundles[routes[0]!.operationId]!, WORK);
  log(
    check.same
      ? `  esbuild options check: ${routes[0]!.entry} rebuilt with the bench's options is byte for byte the bundle cdk synth made`
      : `  WARNING: ${routes[0]!.entry} rebuilt with the bench's options (${check.ours} B) differs from cdk synth's (${check.cdk} B): the references are not built like the functions`,
  );

  // What a function process gets: the function's variables from the template, plus what Lambda
  // itself sets (region, credentials), and the local DynamoDB (direct, not through the proxy).
  const lambdaBase = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'local',
    AWS_DEFAULT_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
  };
  const environments = Object.fromEntries(
    routes.map((route) => [
      route.operationId,
      { ...lambdaBase, AWS_LAMBDA_FUNCTION_NAME: route.operationId, ...functionEnvironment(cdkOut, route.operationId, names) },
    ]),
  );
  const { NODE_OPTIONS: _, ...serverEnvironment } = Object.assign({}, ...Object.values(environments)) as Record<string, string>;

  let extraArms: ((id: string, deployed: Record<string, string>, bare: Record<string, string>) => ColdArm[]) | undefined;
  if (coldVariants) {
    log(`bench: building the cold-start variants (${elapsed()}) …`);
    const variants: Record<string, { minified: string; readable: string; readableReference: string }> = {};
    for (const scenario of mainScenarios()) {
      const route = routes.find((r) => r.operationId === scenario.operationId)!;
      const dir = resolve(WORK, 'variants', route.operationId);
      variants[route.operationId] = {
        minified: await buildVariant(route.entry, resolve(dir, 'minified/index.mjs'), MINIFIED_BUILD),
        readable: await buildVariant(route.entry, resolve(dir, 'readable/index.mjs'), READABLE_BUILD),
        readableReference: await buildReference(counted.coldPlans.get(route.operationId)!, resolve(WORK, 'variants-references'), READABLE_BUILD),
      };
    }
    extraArms = (id, _deployed, bare) => [
      // (a) and (b) are the deployed arms while the function sets NODE_OPTIONS; once it does not,
      // the minified build with and without the flag are measured here.
      ...(_deployed.NODE_OPTIONS
        ? []
        : [
            {
              name: '(a) minified, NODE_OPTIONS=--enable-source-maps',
              bundle: variants[id]!.minified,
              environment: { ...bare, NODE_OPTIONS: '--enable-source-maps' },
            },
            { name: '(b) minified, no NODE_OPTIONS', bundle: variants[id]!.minified, environment: bare },
          ]),
      { name: '(c) whitespace+syntax, identifiers kept, no NODE_OPTIONS', bundle: variants[id]!.readable, environment: bare },
      { name: 'reference built like (c)', bundle: variants[id]!.readableReference, environment: bare },
    ];
  }
  log(`bench: cold starts, ${coldRuns} interleaved runs per arm and route (${elapsed()}) …`);
  const coldRows = await measureColdStarts({ scenarios: mainScenarios(), context, bundles, references, environments, runs: coldRuns, log, extraArms });

  if (coldVariants) {
    // The decision run stops here: its table is the cold-start rows.
    const date = new Date();
    writeReport(resolve(ROOT, 'reports/bench-cold-variants.json'), [...counted.rows, ...coldRows], date);
    log(`tillgate bench (cold-start variants), ${date.toISOString()}, ${machine()}`);
    log(formatTable(coldRows));
    log(`bench: done in ${elapsed()}`);
    throw Object.assign(new Error('done'), { done: true });
  }

  log(`bench: warm overhead, ${settings.warmIterations} invocations per arm and scenario (${elapsed()}) …`);
  const warmRequests = new Map(
    await Promise.all(
      scenarios.map(
        async (scenario) =>
          [scenario, scenario.warmFromRecording ? counted.recordedRequests.get(scenario)! : (await scenario.prepare(context, 1))[0]!] as const,
      ),
    ),
  );
  const warmRows = await measureWarm({
    scenarios,
    plans: counted.warmPlans,
    requests: warmRequests,
    entries: Object.fromEntries(routes.map((route) => [route.operationId, route.entry])),
    environment: { ...serverEnvironment, TOKEN_CACHE_SECONDS: '3600', POWERTOOLS_METRICS_DISABLED: 'true' },
    countersTable: names.counters,
    token,
    iterations: settings.warmIterations,
    iterationsFor: (scenario) => callsFor(scenario, settings.warmIterations, 200),
    workDir: WORK,
    log,
  });

  log(`bench: HTTP, ${settings.httpRounds} × ${settings.httpRequests} requests per server and scenario, ${settings.connections} connections (${elapsed()}) …`);
  const httpRows = await measureHttp({
    scenarios,
    plans: counted.warmPlans,
    context,
    environment: {
      ...serverEnvironment,
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...(process.env.BENCH_HTTP_LOG_LEVEL ? { POWERTOOLS_LOG_LEVEL: process.env.BENCH_HTTP_LOG_LEVEL } : {}),
    },
    requestsPerRun: settings.httpRequests,
    requestsFor: (scenario) => callsFor(scenario, settings.httpRequests, 20),
    rounds: settings.httpRounds,
    connections: settings.connections,
    log,
  });

  const rows: Row[] = [
    ...counted.rows,
    ...coldRows,
    ...warmRows,
    ...httpRows,
    ...(await webhookRows()),
    ...(await peakRows()),
    ...(await jobRows()),
    ...(await exportRows()),
  ];
  const date = new Date();
  writeReport(resolve(ROOT, 'reports/bench.json'), rows, date);
  log('');
  log(`tillgate bench, ${date.toISOString()}${quick ? ' (BENCH_QUICK)' : ''}, ${machine()}`);
  log(formatTable(rows));
  log('');
  log(`bench: done in ${elapsed()}; rows written to reports/bench.json`);
} catch (error) {
  if (!(error as { done?: boolean }).done) {
    console.error(error);
    exitCode = 1;
  }
} finally {
  await stack.stop();
  await proxy.close();
}
process.exit(exitCode);
