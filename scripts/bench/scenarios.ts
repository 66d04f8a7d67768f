import { routes } from '../../functions/routes.ts';

/**
 * What `npm run bench` sends to each operation, keyed by the route table's operationId: how to
 * prepare the state a request needs, and the request. Adding a route is one entry here; the
 * bench refuses to run while a route of functions/routes.ts has none.
 *
 * `prepare(context, count)` returns `count` requests ready to send, each usable once (a void of a
 * new transaction, an event to delete). The first scenario of an operation stands for its route
 * in the cold-start measurement; the others ("repeat" variants) are measured warm and over HTTP.
 */
export interface HttpRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export interface BenchContext {
  readonly accountId: number;
  /** A valid token of `accountId`. */
  readonly token: string;
  /** Sends a request to the local tillgate (to make state); answers status and parsed JSON body. */
  send(request: HttpRequest): Promise<{ status: number; body: any }>;
  /** A string no other call of this run returns. */
  unique(): string;
}

export interface Scenario {
  readonly operationId: string;
  readonly variant: string;
  /** The status every request of the scenario must get. */
  readonly expectStatus: number;
  /** The target for DynamoDB requests per call (token cached), shown beside the figure. */
  readonly requestTarget: string;
  prepare(context: BenchContext, count: number): Promise<HttpRequest[]>;
}

const json = (value: unknown) => JSON.stringify(value);
const headers = (context: BenchContext, extra: Record<string, string> = {}) => ({
  'X-Auth-Token': context.token,
  'Content-Type': 'application/json',
  ...extra,
});

const voidRequest = (context: BenchContext, posTransactionId: string): HttpRequest => ({
  method: 'POST',
  path: '/v2.0/voided_transactions',
  headers: headers(context),
  body: json({
    transaction: {
      site_id: 'bench-site',
      pos_transaction_id: posTransactionId,
      register_id: 'R1',
      operator_id: 'op-7',
      occurred_at: '2025-01-15T10:20:30Z',
      business_date: '2025-01-15',
      posagent_version: '9.4.1',
    },
  }),
});

const generatorBody = json({
  code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'WIN-', store_id: 4242, description: 'bench' },
});

const createRequest = (context: BenchContext, key?: string): HttpRequest => ({
  method: 'POST',
  path: '/v1.0/codegen',
  headers: headers(context, key ? { 'Idempotency-Key': key } : {}),
  body: generatorBody,
});

/** Events made through tillgate itself (a void writes one), so they are what the service writes. */
async function newEvents(context: BenchContext, count: number): Promise<number[]> {
  const ids: number[] = [];
  const workers = Array.from({ length: Math.min(8, count) }, async () => {
    while (ids.length < count) {
      const placeholder = ids.push(0) - 1;
      const answer = await context.send(voidRequest(context, `event-${context.unique()}`));
      const id = answer.body?.transaction?.display_messages?.[0]?.message_content?.event_id;
      if (answer.status !== 200 || typeof id !== 'number') throw new Error(`bench: could not make an event: ${answer.status} ${json(answer.body)}`);
      ids[placeholder] = id;
    }
  });
  await Promise.all(workers);
  return ids;
}

const times = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i));

export const scenarios: readonly Scenario[] = [
  {
    operationId: 'voidTransaction',
    variant: 'new',
    expectStatus: 200,
    requestTarget: '≤ 1.1',
    prepare: async (context, count) => times(count, () => voidRequest(context, `T-${context.unique()}`)),
  },
  {
    operationId: 'voidTransaction',
    variant: 'repeat',
    expectStatus: 200,
    requestTarget: '≤ 2',
    prepare: async (context, count) => {
      const request = voidRequest(context, `T-${context.unique()}`);
      const first = await context.send(request);
      if (first.status !== 200) throw new Error(`bench: first void answered ${first.status}`);
      return times(count, () => request);
    },
  },
  {
    operationId: 'createCodeGenerator',
    variant: 'no key',
    expectStatus: 201,
    requestTarget: '≤ 1.1',
    prepare: async (context, count) => times(count, () => createRequest(context)),
  },
  {
    operationId: 'createCodeGenerator',
    variant: 'new key',
    expectStatus: 201,
    requestTarget: '≤ 1.1',
    prepare: async (context, count) => times(count, () => createRequest(context, `key-${context.unique()}`)),
  },
  {
    operationId: 'createCodeGenerator',
    variant: 'repeated key',
    expectStatus: 201,
    requestTarget: '–',
    prepare: async (context, count) => {
      const request = createRequest(context, `key-${context.unique()}`);
      const first = await context.send(request);
      if (first.status !== 201) throw new Error(`bench: first create answered ${first.status}`);
      return times(count, () => request);
    },
  },
  {
    operationId: 'getEvent',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '1',
    prepare: async (context, count) => {
      // A handful of events, read in turn: a read changes nothing, so requests may repeat.
      const ids = await newEvents(context, Math.min(count, 20));
      return times(count, (i) => ({ method: 'GET', path: `/v1.0/events/${ids[i % ids.length]}`, headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'deleteEvent',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '1',
    prepare: async (context, count) =>
      (await newEvents(context, count)).map((id) => ({ method: 'DELETE', path: `/v1.0/events/${id}`, headers: { 'X-Auth-Token': context.token } })),
  },
];

/** Routes of the route table without a scenario: the bench cannot measure them. */
export function routesWithoutScenario(operationIds = routes.map((route) => route.operationId), declared = scenarios): string[] {
  const covered = new Set(declared.map((scenario) => scenario.operationId));
  return operationIds.filter((id) => !covered.has(id));
}

/** Scenarios naming an operation the route table does not have (a renamed or removed route). */
export function scenariosWithoutRoute(operationIds = routes.map((route) => route.operationId), declared = scenarios): string[] {
  const known = new Set(operationIds);
  return [...new Set(declared.map((scenario) => scenario.operationId).filter((id) => !known.has(id)))];
}

export function checkCoverage(): void {
  const missing = routesWithoutScenario();
  const stale = scenariosWithoutRoute();
  const problems = [
    ...missing.map((id) => `route ${id} (functions/routes.ts) has no scenario: add one to scripts/bench/scenarios.ts`),
    ...stale.map((id) => `scenario ${id} names no route of functions/routes.ts`),
  ];
  if (problems.length > 0) throw new Error(`bench: ${problems.join('; ')}`);
}

/** The scenario that stands for each route in the cold-start measurement: its first. */
export const mainScenarios = (): Scenario[] =>
  routes.map((route) => scenarios.find((scenario) => scenario.operationId === route.operationId)!);

export const label = (scenario: Scenario) => `${scenario.operationId} (${scenario.variant})`;
