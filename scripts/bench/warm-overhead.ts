import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { HttpRequest, Scenario } from './scenarios.ts';
import type { Plan, Step } from './replay.ts';
import { median, percentile, row, type Row } from './report.ts';

/**
 * Warm overhead of the middleware chain: the real handler (from the TypeScript sources) against a
 * bare handler replaying the same DynamoDB calls, both with a stubbed client that answers every
 * command at once with what DynamoDB answered in the recording (tillgate's shared
 * `documents.send` of functions/runtime/clients.ts is patched; the bare handler gets the same
 * stub). Many thousand invocations each, interleaved in blocks, in one child process; p50/p99 of
 * each, beside the p50 of one real GetItem round trip to DynamoDB Local.
 *
 * Run as a child (`--child job.json`) so the runner's own heap and timers stay out of it.
 */
interface Job {
  readonly environment: Record<string, string>;
  readonly token: string;
  readonly countersTable: string;
  readonly iterations: number;
  readonly cases: {
    readonly name: string;
    readonly entry: string;
    readonly plan: Plan;
    readonly request: HttpRequest;
    readonly expectStatus: number;
    readonly iterations: number;
  }[];
}

interface CaseResult {
  readonly name: string;
  readonly tillgate: { p50: number; p99: number };
  readonly bare: { p50: number; p99: number };
}

interface ChildResult {
  readonly cases: CaseResult[];
  readonly roundTripP50: number;
}

const ROOT = resolve(import.meta.dirname, '../..');

export async function measureWarm(options: {
  scenarios: readonly Scenario[];
  plans: Map<Scenario, Plan>;
  requests: Map<Scenario, HttpRequest>;
  entries: Record<string, string>;
  environment: Record<string, string>;
  token: string;
  /** The counters table: tillgate's id block reservations are answered by the stub, beside the plan. */
  countersTable: string;
  iterations: number;
  /** Invocations per arm for one scenario (fewer for heavy ones); default `iterations`. */
  iterationsFor?: (scenario: Scenario) => number;
  workDir: string;
  log: (line: string) => void;
}): Promise<Row[]> {
  // Warm means the token is cached (the child's warm-up call caches it): a scenario recorded with
  // a new account's token (createWebhookEndpoint, deleteWebhookEndpoint) starts with that
  // account's token lookup, which neither arm makes warm.
  const withoutTokenLookup = (plan: Plan): Plan => {
    const first = plan.steps[0];
    const lookup = first?.command === 'GetCommand' && (first.input as { TableName?: string }).TableName === options.environment.API_KEYS_TABLE;
    return lookup ? { ...plan, steps: plan.steps.slice(1) } : plan;
  };
  const cases = options.scenarios.map((scenario) => ({
    name: `${scenario.operationId} (${scenario.variant})`,
    entry: options.entries[scenario.operationId]!,
    plan: withoutTokenLookup(options.plans.get(scenario)!),
    request: options.requests.get(scenario)!,
    expectStatus: scenario.expectStatus,
    iterations: options.iterationsFor?.(scenario) ?? options.iterations,
  }));
  const run = async (logLevel: string) => {
    const file = join(options.workDir, `warm-${logLevel}.json`);
    mkdirSync(options.workDir, { recursive: true });
    const job: Job = {
      environment: { ...options.environment, POWERTOOLS_LOG_LEVEL: logLevel },
      token: options.token,
      countersTable: options.countersTable,
      iterations: options.iterations,
      cases,
    };
    writeFileSync(file, JSON.stringify(job));
    return runChild(file);
  };
  const production = await run(options.environment.POWERTOOLS_LOG_LEVEL ?? 'INFO');
  const silenced = await run('SILENT');
  const rows: Row[] = [row('DynamoDB Local GetItem round trip p50', 'µs', production.roundTripP50, null, 'for scale')];
  for (const [i, result] of production.cases.entries()) {
    const quiet = silenced.cases[i]!;
    options.log(
      `  ${result.name}: tillgate p50 ${result.tillgate.p50.toFixed(1)} µs p99 ${result.tillgate.p99.toFixed(1)} µs; bare p50 ${result.bare.p50.toFixed(1)} µs p99 ${result.bare.p99.toFixed(1)} µs; logs silenced: tillgate p50 ${quiet.tillgate.p50.toFixed(1)} µs`,
    );
    rows.push(row(`warm p50: ${result.name}`, 'µs', result.tillgate.p50, result.bare.p50, '–'));
    rows.push(row(`warm p99: ${result.name}`, 'µs', result.tillgate.p99, result.bare.p99, '–'));
    rows.push(row(`warm overhead p50 (chain − bare): ${result.name}`, 'µs', result.tillgate.p50 - result.bare.p50, null, '≤ 25'));
    rows.push(row(`warm overhead p50, logs silenced: ${result.name}`, 'µs', quiet.tillgate.p50 - quiet.bare.p50, null, 'diagnosis'));
  }
  return rows;
}

function runChild(jobFile: string): Promise<ChildResult> {
  return new Promise((done, fail) => {
    const child = spawn(join(ROOT, 'node_modules/.bin/node'), ['--import', 'tsx', join(ROOT, 'scripts/bench/warm-overhead.ts'), '--child', jobFile], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let errors = '';
    child.stdio[3]!.on('data', (chunk) => (output += String(chunk)));
    child.stderr!.on('data', (chunk) => (errors += String(chunk)));
    child.on('close', (code) =>
      code === 0 && output ? done(JSON.parse(output)) : fail(new Error(`bench: warm child exited ${code}: ${errors.slice(-1500)}`)),
    );
  });
}

// ---------------------------------------------------------------- the child

async function child(jobFile: string): Promise<void> {
  const job = JSON.parse(readFileSync(jobFile, 'utf8')) as Job;
  Object.assign(process.env, job.environment);
  // Imported only now: the data-access modules read their table names when they load.
  const { documents } = await import('../../functions/runtime/clients.ts');
  const { accountForToken, hashToken } = await import('../../functions/http/tokens.ts');
  const lib = await import('@aws-sdk/lib-dynamodb');
  const { lambdaHandler } = await import('./replay.ts');
  const { lambdaEvent } = await import('./cold-start.ts');

  // The token is cached for real (one GetItem), as in a warm function; then the GetItem round trip.
  if ((await accountForToken(job.token)) === undefined) throw new Error('bench: the token is not valid');
  const { GetCommand } = lib;
  const roundTrips: number[] = [];
  for (let i = 0; i < 320; i++) {
    const started = performance.now();
    await documents.send(new GetCommand({ TableName: process.env.API_KEYS_TABLE, Key: { token_hash: hashToken(job.token) } }));
    if (i >= 20) roundTrips.push((performance.now() - started) * 1000);
  }

  const stub = () => {
    const state = { steps: [] as readonly Step[], next: 0 };
    let blockTop = 1e12;
    const send = async (command: { constructor: { name: string }; input?: { TableName?: string } }) => {
      // An id block reservation (once per ID_BLOCK_SIZE ids): not in the warm plan, which was
      // recorded with a block in hand; answered here with a fresh block, as DynamoDB would.
      if (
        command.constructor.name === 'UpdateCommand' &&
        command.input?.TableName === job.countersTable &&
        state.steps[state.next]?.command !== 'UpdateCommand'
      ) {
        blockTop += 1e6;
        return { Attributes: { value: blockTop } };
      }
      const step = state.steps[state.next];
      if (!step) throw new Error(`bench: unexpected DynamoDB call ${command.constructor.name}`);
      // Calls a handler makes side by side (the codes list's generator read beside its Queries)
      // may come in another order than the recording's: the next recorded call of the same kind
      // and table answers, moved forward.
      const at = state.steps.findIndex(
        (candidate, index) =>
          index >= state.next &&
          candidate.command === command.constructor.name &&
          (candidate.input as { TableName?: string } | undefined)?.TableName === command.input?.TableName,
      );
      if (at < 0) throw new Error(`bench: expected ${step.command}, got ${command.constructor.name}`);
      const taken = state.steps[at]!;
      if (at !== state.next) state.steps = [...state.steps.slice(0, state.next), taken, ...state.steps.slice(state.next, at), ...state.steps.slice(at + 1)];
      state.next++;
      if (taken.error) {
        throw Object.assign(new Error(taken.error.message), {
          name: taken.error.name,
          $metadata: {},
          ...(taken.error.cancellationReasons ? { CancellationReasons: structuredClone(taken.error.cancellationReasons) } : {}),
        });
      }
      return taken.output;
    };
    return { state, send };
  };
  const real = stub();
  const realSend = documents.send.bind(documents);
  const bareStub = stub();
  const commands = lib as unknown as Record<string, new (input: any) => unknown>;

  const cases: CaseResult[] = [];
  for (const c of job.cases) {
    const { handler: tillgate } = (await import(pathToFileURL(resolve(ROOT, c.entry)).href)) as {
      handler: (e: unknown, ctx: unknown) => Promise<{ statusCode: number; body?: string }>;
    };
    // One call against DynamoDB Local first, as a warm environment has made: it fills what an
    // environment reads once (issueCodes' generator settings) and reserves an id block.
    (documents as unknown as { send: unknown }).send = realSend;
    await tillgate(lambdaEvent(c.request), {
      awsRequestId: 'warm-up',
      functionName: 'warm',
      getRemainingTimeInMillis: () => 10_000,
      callbackWaitsForEmptyEventLoop: false,
    });
    (documents as unknown as { send: unknown }).send = real.send;
    const bare = lambdaHandler(c.plan, commands, bareStub.send);
    const template = lambdaEvent(c.request);
    const context = { awsRequestId: 'warm', functionName: 'warm', getRemainingTimeInMillis: () => 10_000, callbackWaitsForEmptyEventLoop: false };
    const arms = [
      { invoke: tillgate, stub: real, times: [] as number[] },
      { invoke: bare, stub: bareStub, times: [] as number[] },
    ];
    for (const arm of arms) arm.stub.state.steps = c.plan.steps;
    const block = Math.min(250, c.iterations);
    const warmup = Math.min(1000, c.iterations);
    for (let round = -Math.ceil(warmup / block); round < Math.ceil(c.iterations / block); round++) {
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(round + k + 2 * arms.length) % arms.length]!;
        const events = Array.from({ length: block }, () => structuredClone(template));
        for (const event of events) {
          arm.stub.state.next = 0;
          const started = performance.now();
          const result = await arm.invoke(event, context);
          const elapsed = performance.now() - started;
          if (round >= 0) arm.times.push(elapsed * 1000);
          if (result.statusCode !== c.expectStatus)
            throw new Error(`bench: ${c.name} answered ${result.statusCode} with a stubbed client: ${result.body?.slice(0, 300)}`);
          if (arm.stub.state.next !== c.plan.steps.length)
            throw new Error(`bench: ${c.name} made ${arm.stub.state.next} calls, the recording ${c.plan.steps.length}`);
        }
      }
    }
    const summary = (times: number[]) => ({ p50: median(times), p99: percentile(times, 99) });
    cases.push({ name: c.name, tillgate: summary(arms[0]!.times), bare: summary(arms[1]!.times) });
  }
  writeSync(3, JSON.stringify({ cases, roundTripP50: median(roundTrips) } satisfies ChildResult));
}

if (process.argv[2] === '--child') {
  child(process.argv[3]!).then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
