import { fork, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { routes } from '../../functions/routes.ts';
import type { Plan } from './replay.ts';
import { label, type BenchContext, type HttpRequest, type Scenario } from './scenarios.ts';
import { median, row, type Row } from './report.ts';

/**
 * HTTP per operation: tillgate's local server (bundled handlers, production settings) against a
 * bare node:http server making the same DynamoDB calls (servers/baseline.ts), each in a child
 * process of its own reporting its CPU time. For every scenario: a short warm-up of each, then
 * short runs of a fixed number of requests, interleaved (A B, B A, …); requests/second, errors
 * (non-2xx, timeouts, connection errors) and server CPU per request, medians over the rounds.
 */
const ROOT = resolve(import.meta.dirname, '../..');

interface Server {
  readonly child: ChildProcess;
  readonly ready: Record<string, any>;
  request(message: object, reply: string): Promise<any>;
}

async function startServer(file: string, environment: Record<string, string>): Promise<Server> {
  const child = fork(join(ROOT, file), [], {
    cwd: ROOT,
    execPath: join(ROOT, 'node_modules/.bin/node'),
    // BENCH_CPU_PROF=dir: each server writes a V8 CPU profile there when it stops (for diagnosis).
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [])],
    env: environment,
    // Production log lines are written, to /dev/null: their cost is part of the server's.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const waitFor = (type: string) =>
    new Promise<any>((done, fail) => {
      const onMessage = (message: any) => {
        if (message?.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        done(message);
      };
      const onExit = (code: number | null) => fail(new Error(`bench: ${file} exited ${code}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ready = await waitFor('ready');
  return {
    child,
    ready,
    request: (message, reply) => {
      const answer = waitFor(reply);
      child.send(message);
      return answer;
    },
  };
}

async function run(server: Server, url: string, pool: HttpRequest[], connections: number) {
  let next = 0;
  const before = (await server.request({ type: 'cpu' }, 'cpu')).micros as number;
  const started = performance.now();
  let last = started;
  const instance = autocannon({
    url,
    connections,
    amount: pool.length,
    timeout: 10,
    requests: [{ setupRequest: (request: any) => ({ ...request, ...pool[next++ % pool.length] }) }],
  });
  instance.on('response', () => (last = performance.now()));
  const result = await instance;
  // autocannon notices the end of an `amount` run on its one-second tick, and its own duration
  // is in whole seconds: the time to the last answer is what counts.
  const seconds = (last - started) / 1000;
  const after = (await server.request({ type: 'cpu' }, 'cpu')).micros as number;
  const total = result.requests.total;
  return {
    perSecond: total / seconds,
    errors: result.errors + result.timeouts + result.non2xx,
    cpuPerRequest: total > 0 ? (after - before) / total : Number.NaN,
  };
}

export async function measureHttp(options: {
  scenarios: readonly Scenario[];
  plans: Map<Scenario, Plan>;
  context: BenchContext;
  environment: Record<string, string>;
  requestsPerRun: number;
  /** Requests per run for one scenario (fewer for heavy ones); default `requestsPerRun`. */
  requestsFor?: (scenario: Scenario) => number;
  rounds: number;
  connections: number;
  log: (line: string) => void;
}): Promise<Row[]> {
  const tillgate = await startServer('scripts/bench/servers/tillgate.ts', options.environment);
  const baseline = await startServer('scripts/bench/servers/baseline.ts', options.environment);
  const rows: Row[] = [];
  try {
    for (const scenario of options.scenarios) {
      const host = routes.find((route) => route.operationId === scenario.operationId)!.host;
      await baseline.request({ type: 'plan', plan: options.plans.get(scenario) }, 'plan-set');
      const arms = [
        { name: 'tillgate', server: tillgate, url: tillgate.ready.urls[host] as string, results: [] as Awaited<ReturnType<typeof run>>[] },
        { name: 'baseline', server: baseline, url: baseline.ready.url as string, results: [] as Awaited<ReturnType<typeof run>>[] },
      ];
      const perRun = options.requestsFor?.(scenario) ?? options.requestsPerRun;
      const warmup = Math.min(100, perRun);
      const pool = await scenario.prepare(options.context, (warmup + perRun * options.rounds) * arms.length);
      for (const arm of arms) await run(arm.server, arm.url, pool.splice(0, warmup), options.connections);
      for (let round = 0; round < options.rounds; round++) {
        for (let k = 0; k < arms.length; k++) {
          const arm = arms[(round + k) % arms.length]!;
          arm.results.push(await run(arm.server, arm.url, pool.splice(0, perRun), options.connections));
        }
      }
      const [t, b] = arms.map((arm) => ({
        perSecond: median(arm.results.map((r) => r.perSecond)),
        errors: arm.results.reduce((sum, r) => sum + r.errors, 0),
        cpu: median(arm.results.map((r) => r.cpuPerRequest)),
      })) as [{ perSecond: number; errors: number; cpu: number }, { perSecond: number; errors: number; cpu: number }];
      options.log(
        `  ${label(scenario)}: tillgate ${t.perSecond.toFixed(0)} req/s, ${t.cpu.toFixed(0)} µs CPU/req, ${t.errors} errors; baseline ${b.perSecond.toFixed(0)} req/s, ${b.cpu.toFixed(0)} µs CPU/req, ${b.errors} errors`,
      );
      rows.push(row(`HTTP throughput: ${label(scenario)}`, 'req/s', t.perSecond, b.perSecond, '≥ 0.9 ×'));
      rows.push(row(`HTTP errors: ${label(scenario)}`, 'count', t.errors, b.errors, '0'));
      rows.push(row(`HTTP server CPU per request: ${label(scenario)}`, 'µs', t.cpu, b.cpu, 'reported'));
    }
  } finally {
    // Asked to stop (process.exit), so a --cpu-prof profile is written; killed if it does not.
    await Promise.all(
      [tillgate, baseline].map(
        (server) =>
          new Promise<void>((done) => {
            const timer = setTimeout(() => server.child.kill(), 5000);
            server.child.once('exit', () => {
              clearTimeout(timer);
              done();
            });
            server.child.send({ type: 'stop' });
          }),
      ),
    );
  }
  return rows;
}
