import { isRead, type CountingProxy, type WireCall } from './proxy.ts';
import { buildPlan, type Recording } from './plan.ts';
import { httpInput, type Plan } from './replay.ts';
import { label, type BenchContext, type HttpRequest, type Scenario } from './scenarios.ts';
import { row, type Row } from './report.ts';

/**
 * DynamoDB requests and capacity per operation, counted on the wire by the proxy: each scenario's
 * requests are sent one at a time to the in-process local server (whose client talks to the
 * proxy), and what crossed the wire between one answer and the next belongs to that request.
 * The token is cached beforehand, so token lookups are not in the figures.
 *
 * The same traffic is recorded: the first two calls of each scenario become the replay plan of
 * its baselines (warm and HTTP); two more calls with never-seen tokens, of each route's first
 * scenario, become the plan of the cold-start reference (token lookup included).
 */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export type SendRaw = (request: HttpRequest) => Promise<Answer>;

export function inputOf(request: HttpRequest) {
  const url = new URL(request.path, 'http://bench');
  return httpInput(url.pathname, Object.fromEntries(url.searchParams), request.headers, request.body);
}

async function record(proxy: CountingProxy, send: SendRaw, request: HttpRequest, expectStatus: number, what: string): Promise<Recording> {
  proxy.take();
  const at = Date.now();
  const answer = await send(request);
  const calls = proxy.take();
  if (answer.status !== expectStatus) {
    throw new Error(`bench: ${what} answered ${answer.status}, expected ${expectStatus}: ${answer.body.slice(0, 300)}`);
  }
  const kept: Record<string, string> = {};
  for (const name of ['content-type', 'location']) if (answer.headers[name]) kept[name] = answer.headers[name]!;
  return { input: inputOf(request), calls, at, answer: { statusCode: answer.status, headers: kept, body: answer.body } };
}

export async function measureRequests(options: {
  scenarios: readonly Scenario[];
  mainScenarios: readonly Scenario[];
  context: BenchContext;
  proxy: CountingProxy;
  send: SendRaw;
  calls: number;
  /** A request of the scenario with a token no process has cached yet. */
  withFreshToken: (request: HttpRequest) => Promise<HttpRequest>;
}): Promise<{ rows: Row[]; details: string[]; warmPlans: Map<Scenario, Plan>; coldPlans: Map<string, Plan> }> {
  const { proxy, send, context } = options;
  const rows: Row[] = [];
  const details: string[] = [];
  const warmPlans = new Map<Scenario, Plan>();
  for (const scenario of options.scenarios) {
    const requests = await scenario.prepare(context, options.calls);
    const recordings: Recording[] = [];
    for (const request of requests) recordings.push(await record(proxy, send, request, scenario.expectStatus, label(scenario)));
    const all = recordings.flatMap((r) => r.calls);
    const perCall = (calls: readonly WireCall[]) => calls.length / recordings.length;
    const byTarget = new Map<string, WireCall[]>();
    for (const call of all) byTarget.set(call.target, [...(byTarget.get(call.target) ?? []), call]);
    const sum = (calls: readonly WireCall[]) => calls.reduce((total, call) => total + call.capacityUnits, 0) / recordings.length;
    const reads = sum(all.filter((c) => isRead(c.target)));
    const writes = sum(all.filter((c) => !isRead(c.target)));
    rows.push(row(`DynamoDB requests: ${label(scenario)}`, 'req/call', perCall(all), null, scenario.requestTarget));
    rows.push(row(`DynamoDB capacity: ${label(scenario)}`, 'CU/call', reads + writes, null, 'floor in README'));
    details.push(
      `${label(scenario)}: ${[...byTarget].map(([target, calls]) => `${target} ${perCall(calls).toFixed(2)}`).join(' + ') || 'none'}` +
        ` = ${perCall(all).toFixed(2)} requests; ${reads.toFixed(2)} read CU + ${writes.toFixed(2)} write CU (over ${recordings.length} calls)`,
    );
    warmPlans.set(scenario, buildPlan(scenario.operationId, scenario.variant, recordings[0]!, recordings[1]!));
  }

  const coldPlans = new Map<string, Plan>();
  for (const scenario of options.mainScenarios) {
    const requests = await scenario.prepare(context, 2);
    const recorded: Recording[] = [];
    for (const request of requests) recorded.push(await record(proxy, send, await options.withFreshToken(request), scenario.expectStatus, `${label(scenario)} (cold)`));
    coldPlans.set(scenario.operationId, buildPlan(scenario.operationId, `${scenario.variant}, token not cached`, recorded[0]!, recorded[1]!));
  }
  return { rows, details, warmPlans, coldPlans };
}
