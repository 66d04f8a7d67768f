import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { hosts, type HostId } from '../../functions/routes.ts';
import { tables, type TableId } from '../../functions/tables.ts';
import { buckets, type BucketSpec } from '../../functions/buckets.ts';
import { queues, type QueueSpec } from '../../functions/queues.ts';
import { keys, secrets, type KeySpec, type SecretSpec } from '../../functions/secrets.ts';
import { OPERATION_METADATA_KEY } from '../../infra/bundles.ts';
import { matchRoute, toProxyEvent } from '../../local/server.ts';
import type { TableNames } from '../../local/dynamodb.ts';
import { label, type BenchContext, type HttpRequest, type Scenario } from './scenarios.ts';
import { median, row, type Row } from './report.ts';

/**
 * Cold start per route: a fresh Node 24 process (node_modules/.bin/node) from spawn to the first
 * response of one invocation against DynamoDB Local, for
 *   - tillgate as deployed: the bundle cdk synth built, with the function's environment from the
 *     synthesized template (NODE_OPTIONS included), table names pointed at the local tables;
 *   - the reference: a bundle built with the same esbuild options whose bare handler makes the
 *     same DynamoDB requests (token lookup included), with the same environment minus NODE_OPTIONS;
 *   - for diagnosis, tillgate's bundle without NODE_OPTIONS.
 * Runs are interleaved (A B C, B C A, C A B, …) and each arm's median is reported.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const NODE = join(ROOT, 'node_modules/.bin/node');
const HARNESS = join(ROOT, 'scripts/bench/cold-harness.mjs');

/** The function's environment variables from the synthesized template, tables resolved to local names. */
export function functionEnvironment(cdkOut: string, operationId: string, names: TableNames): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(cdkOut, 'manifest.json'), 'utf8'));
  for (const artifact of Object.values<any>(manifest.artifacts ?? {})) {
    if (artifact.type !== 'aws:cloudformation:stack') continue;
    const template = JSON.parse(readFileSync(join(cdkOut, artifact.properties.templateFile), 'utf8'));
    for (const resource of Object.values<any>(template.Resources ?? {})) {
      if (resource.Type !== 'AWS::Lambda::Function' || resource.Metadata?.[OPERATION_METADATA_KEY] !== operationId) continue;
      const variables: Record<string, unknown> = resource.Properties?.Environment?.Variables ?? {};
      const environment: Record<string, string> = {};
      for (const [name, value] of Object.entries(variables)) {
        const table = (Object.keys(tables) as TableId[]).find((id) => tables[id].envVar === name);
        // A secret's or a key's ARN (a token of the deployed secret or KMS key) becomes its local
        // value, as startLocalStack hands it to the in-process functions.
        const secret = [...Object.values<SecretSpec>(secrets), ...Object.values<KeySpec>(keys)].find((spec) => spec.arnEnvVar === name);
        if (table) environment[name] = names[table];
        // A queue's URL is left out (the template's is a token of the deployed queue): no
        // cold-start request sends to a queue.
        else if (Object.values<QueueSpec>(queues).some((queue) => queue.envVar === name)) continue;
        else if (secret) environment[secret.localEnvVar] = requiredEnv(secret.localEnvVar);
        // A bucket's name (a token of the deployed bucket) becomes the local S3's bucket, and the
        // local S3's endpoint comes with it, as startLocalStack hands them to the functions.
        else if (Object.values<BucketSpec>(buckets).some((bucket) => bucket.envVar === name)) {
          environment[name] = requiredEnv(name);
          environment.S3_ENDPOINT = requiredEnv('S3_ENDPOINT');
        } else if (typeof value === 'string') environment[name] = value;
        else
          throw new Error(
            `bench: ${operationId}'s environment variable ${name} is not a string in the template (${JSON.stringify(value)}): teach cold-start.ts to resolve it`,
          );
      }
      return environment;
    }
  }
  throw new Error(`bench: no function for ${operationId} in ${cdkOut}`);
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`bench: ${name} is not set: start the local stack (startLocalStack) first`);
  return value;
}

export function lambdaEvent(request: HttpRequest) {
  const url = new URL(request.path, 'http://bench');
  const route = (Object.keys(hosts) as HostId[]).map((host) => matchRoute(host, request.method, url.pathname)).find(Boolean)?.route;
  if (!route) throw new Error(`bench: no route for ${request.method} ${request.path}`);
  return toProxyEvent({
    route,
    target: request.path,
    rawHeaders: Object.entries(request.headers).flat(),
    body: Buffer.from(request.body ?? ''),
    requestId: `bench-${Math.random().toString(36).slice(2)}`,
    sourceIp: '127.0.0.1',
    protocol: 'HTTP/1.1',
  });
}

/** One cold invocation; milliseconds from spawn to the handler's result. */
function coldInvocation(bundle: string, environment: Record<string, string>, request: HttpRequest, expectStatus: number): Promise<number> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(NODE, [HARNESS, bundle], {
      env: { ...environment, BENCH_EVENT: JSON.stringify(lambdaEvent(request)) },
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let elapsed: number | undefined;
    let answer = '';
    let errors = '';
    child.stdio[3]!.on('data', (chunk) => {
      elapsed ??= performance.now() - started;
      answer += String(chunk);
    });
    child.stderr!.on('data', (chunk) => (errors += String(chunk)));
    child.on('error', fail);
    child.on('close', (code) => {
      const status = answer ? JSON.parse(answer).statusCode : undefined;
      if (code !== 0 || elapsed === undefined || status !== expectStatus) {
        fail(
          new Error(
            `bench: cold start of ${bundle} exited ${code}, answered ${status} (expected ${expectStatus}): ${errors
              .split('\n')
              .filter((line) => line.length < 300)
              .join('\n')
              .slice(-1500)}`,
          ),
        );
      } else done(elapsed);
    });
  });
}

export interface ColdArm {
  readonly name: string;
  readonly bundle: string;
  readonly environment: Record<string, string>;
  /** The arm this one's ratio is taken against (default: the reference). */
  readonly against?: string;
}

/**
 * Per route, interleaved: `tillgate` (as deployed), `reference`, and any further arms (variants
 * of the build or the environment, for diagnosis). Each arm's median becomes a row beside the
 * median of the arm it is judged against.
 */
export async function measureColdStarts(options: {
  scenarios: readonly Scenario[];
  context: BenchContext;
  bundles: Record<string, string>;
  references: Record<string, string>;
  environments: Record<string, Record<string, string>>;
  runs: number;
  log: (line: string) => void;
  /** Further arms per route (the NODE_OPTIONS and build variants of BENCH_COLD_VARIANTS=1). */
  extraArms?: (operationId: string, deployed: Record<string, string>, bare: Record<string, string>) => ColdArm[];
}): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of options.scenarios) {
    const id = scenario.operationId;
    const deployed = options.environments[id]!;
    const { NODE_OPTIONS: nodeOptions, ...bare } = deployed;
    const arms = [
      { name: 'tillgate', bundle: options.bundles[id]!, environment: deployed },
      { name: 'reference', bundle: options.references[id]!, environment: bare },
      // Only while the deployed function sets NODE_OPTIONS: what they cost.
      ...(nodeOptions ? [{ name: 'tillgate without NODE_OPTIONS', bundle: options.bundles[id]!, environment: bare }] : []),
      ...(options.extraArms?.(id, deployed, bare) ?? []),
    ].map((arm) => ({ ...arm, times: [] as number[] }));
    const requests = await (scenario.prepareCold ?? scenario.prepare)(options.context, options.runs * arms.length + 1);
    // One unmeasured run first: the file cache holds every bundle before the first timed spawn.
    for (const arm of arms) if (!existsSync(arm.bundle)) throw new Error(`bench: missing bundle ${arm.bundle}`);
    await coldInvocation(arms[0]!.bundle, arms[0]!.environment, requests.pop()!, scenario.expectStatus);
    for (let round = 0; round < options.runs; round++) {
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(round + k) % arms.length]!;
        arm.times.push(await coldInvocation(arm.bundle, arm.environment, requests.pop()!, scenario.expectStatus));
      }
    }
    const medians = new Map(arms.map((arm) => [arm.name, median(arm.times)]));
    options.log(`  ${label(scenario)}: ${arms.map((arm) => `${arm.name} ${medians.get(arm.name)!.toFixed(1)} ms`).join(', ')} (medians of ${options.runs})`);
    rows.push(row(`cold start: ${id}`, 'ms', medians.get('tillgate')!, medians.get('reference')!, '≤ 1.05 ×'));
    for (const arm of arms.slice(2)) {
      const against = (arm as ColdArm).against ?? 'reference';
      rows.push(
        row(
          `cold start: ${id}, ${arm.name}${against === 'reference' ? '' : ` (baseline: ${against})`}`,
          'ms',
          medians.get(arm.name)!,
          medians.get(against)!,
          'diagnosis',
        ),
      );
    }
    rows.push(row(`bundle size: ${id}`, 'KiB', statSync(options.bundles[id]!).size / 1024, statSync(options.references[id]!).size / 1024, 'diagnosis'));
  }
  return rows;
}
