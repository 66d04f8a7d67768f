import { isRead, type CountingProxy, type WireCall } from './proxy.ts';
import { buildPlan, type Recording } from './plan.ts';
import { itemSize } from './capacity.ts';
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
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export type SendRaw = (request: HttpRequest) => Promise<Answer>;

function inputOf(request: HttpRequest) {
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

/**
 * A call's capacity units as DynamoDB Local reported them, except that Local reports a
 * transaction's capacity once per table, not per item (100 codes in one TransactWriteItems: 2
 * WCU): for a transaction, at least 2 WCU per item and started KB of each Put's item (index
 * copies not counted). A transaction cancelled by a failed condition reports nothing.
 */
export function unitsOf(call: WireCall): number {
  if (call.target !== 'TransactWriteItems' || call.status !== 200) return call.capacityUnits;
  const items = (call.request.TransactItems as Record<string, any>[] | undefined) ?? [];
  const perItem = items.reduce((sum, item) => sum + 2 * (item.Put ? Math.max(1, Math.ceil(itemSize(item.Put.Item) / 1024)) : 1), 0);
  return Math.max(call.capacityUnits, perItem);
}

/** How many calls of a scenario a section makes: `calls` for a typical one, fewer for heavy ones. */
export const callsFor = (scenario: Scenario, calls: number, minimum = 4) => Math.max(minimum, Math.round(calls / (scenario.weight ?? 1)));

/** The id counter's block reservation (functions/data/ids.ts): an UpdateItem on the counters table. */
const isBlockReservation = (call: WireCall, countersTable: string) => call.target === 'UpdateItem' && call.request.TableName === countersTable;

/**
 * Two recordings for a warm plan: the first two consecutive ones that made the same calls and
 * neither reserved an id block. A warm environment reserves one block per ID_BLOCK_SIZE ids, so
 * most warm calls make no reservation; the reservation's share is in the amortized request count.
 */
export function warmPair(recordings: readonly Recording[], countersTable: string): [Recording, Recording] {
  const targets = (r: Recording) => r.calls.map((c) => c.target).join();
  for (let i = 0; i + 1 < recordings.length; i++) {
    const [a, b] = [recordings[i]!, recordings[i + 1]!];
    if (a.calls.some((c) => isBlockReservation(c, countersTable)) || b.calls.some((c) => isBlockReservation(c, countersTable))) continue;
    if (targets(a) === targets(b)) return [a, b];
  }
  throw new Error('bench: no two consecutive recordings made the same calls without reserving an id block');
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
  /** The counters table's name: its UpdateItems are the id block reservations. */
  countersTable: string;
  /** ID_BLOCK_SIZE of the server measured. */
  blockSize: number;
  /** Draws one id from the server's own block (the same module instance its handlers use). */
  nextId: () => Promise<number>;
  /** Drops the rest of the server's id block, as a fresh execution environment has none. */
  discardIdBlock: () => void;
}): Promise<{ rows: Row[]; details: string[]; warmPlans: Map<Scenario, Plan>; coldPlans: Map<string, Plan>; recordedRequests: Map<Scenario, HttpRequest> }> {
  const { proxy, send, context, countersTable, blockSize } = options;
  const rows: Row[] = [];
  const details: string[] = [];
  const warmPlans = new Map<Scenario, Plan>();
  /** The request each warm plan was recorded from (the plan's answers belong to it). */
  const recordedRequests = new Map<Scenario, HttpRequest>();
  for (const scenario of options.scenarios) {
    const n = callsFor(scenario, options.calls);
    const requests = await scenario.prepare(context, n);
    // Ids drawn by the calls: the server's next id before and after (its blocks are contiguous
    // while nothing else reserves one, which holds in this section).
    const firstId = await options.nextId();
    const recordings: Recording[] = [];
    for (const request of requests) recordings.push(await record(proxy, send, request, scenario.expectStatus, label(scenario)));
    const idsPerCall = ((await options.nextId()) - firstId - 1) / recordings.length;
    const all = recordings.flatMap((r) => r.calls);
    const reservations = all.filter((c) => isBlockReservation(c, countersTable));
    const work = all.filter((c) => !isBlockReservation(c, countersTable));
    const perCall = (calls: readonly WireCall[]) => calls.length / recordings.length;
    const byTarget = new Map<string, WireCall[]>();
    for (const call of work) byTarget.set(call.target, [...(byTarget.get(call.target) ?? []), call]);
    const sum = (calls: readonly WireCall[]) => calls.reduce((total, call) => total + unitsOf(call), 0) / recordings.length;
    // One reservation per blockSize ids: its share of a call is idsPerCall / blockSize, whatever
    // this window of calls happened to meet (0 or 1 reservation in 50 calls of one id each).
    const blockShare = idsPerCall / blockSize;
    const reservationUnits = reservations.length > 0 ? reservations[0]!.capacityUnits : 1;
    const requestsPerCall = perCall(work) + blockShare;
    const reads = sum(work.filter((c) => isRead(c.target)));
    const writes = sum(work.filter((c) => !isRead(c.target))) + blockShare * reservationUnits;
    const floors = recordings.map((r) => (typeof scenario.floor.units === 'number' ? scenario.floor.units : scenario.floor.units(r.calls)));
    const floor = floors.reduce((a, b) => a + b, 0) / floors.length;
    rows.push(row(`DynamoDB requests: ${label(scenario)}`, 'req/call', requestsPerCall, null, scenario.requestTarget));
    if (scenario.transactionTarget) {
      rows.push(
        row(
          `DynamoDB transactions: ${label(scenario)}`,
          'tx/call',
          perCall(work.filter((c) => c.target === 'TransactWriteItems')),
          null,
          scenario.transactionTarget,
        ),
      );
    }
    rows.push(row(`DynamoDB capacity (baseline: floor): ${label(scenario)}`, 'CU/call', reads + writes, floor, `floor: ${scenario.floor.how}`));
    details.push(
      `${label(scenario)}: ${[...byTarget].map(([target, calls]) => `${target} ${perCall(calls).toFixed(2)}`).join(' + ') || 'none'}` +
        ` + id blocks ${idsPerCall.toFixed(2)} ids/call ÷ ${blockSize} = ${requestsPerCall.toFixed(3)} requests` +
        ` (block reservations seen in this window: ${reservations.length}); ${reads.toFixed(2)} read CU + ${writes.toFixed(2)} write CU, floor ${floor.toFixed(2)} (over ${recordings.length} calls)`,
    );
    let a: Recording, b: Recording;
    try {
      [a, b] = warmPair(recordings, countersTable);
    } catch (error) {
      const shapes = recordings.map((r) => r.calls.map((c) => c.target).join('+'));
      throw new Error(`${label(scenario)}: ${(error as Error).message} (${shapes.join(' | ')})`);
    }
    warmPlans.set(scenario, buildPlan(scenario.operationId, scenario.variant, a, b));
    recordedRequests.set(scenario, requests[recordings.indexOf(a)]!);
  }

  // A fresh execution environment has no id block: its first id-drawing call reserves one. Both
  // recordings of a cold plan start without a block, so the reference makes that reservation too.
  const coldPlans = new Map<string, Plan>();
  for (const scenario of options.mainScenarios) {
    const requests = await (scenario.prepareCold ?? scenario.prepare)(context, 2);
    const recorded: Recording[] = [];
    for (const request of requests) {
      const fresh = await options.withFreshToken(request);
      options.discardIdBlock();
      recorded.push(await record(proxy, send, fresh, scenario.expectStatus, `${label(scenario)} (cold)`));
    }
    coldPlans.set(scenario.operationId, buildPlan(scenario.operationId, `${scenario.variant}, token not cached, no id block`, recorded[0]!, recorded[1]!));
  }
  return { rows, details, warmPlans, coldPlans, recordedRequests };
}
