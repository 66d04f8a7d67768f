import { issuancePlan } from '../../functions/codes/issuance-plan.ts';
import { PROMOTION_SHARDS as SHARD_COUNT } from '../../functions/tables.ts';
import { pathOf, routeOf, routes } from '../../functions/routes.ts';
import type { CoreBody, PosBody, Tillgate } from '../../client/index.ts';
import type { WireCall } from './proxy.ts';
import { pageReadUnits } from './capacity.ts';

/** The lists' default page (functions/http/pagination.ts). */
const DEFAULT_PAGE = 100;

/**
 * What `npm run bench` sends to each operation, keyed by the route table's operationId: how to
 * prepare the state a request needs, and the request. Adding a route is one entry here; the
 * bench refuses to run while a route of functions/routes.ts has none.
 *
 * `prepare(context, count)` returns `count` requests ready to send, each usable once (a void of a
 * new transaction, an event to delete). The first scenario of an operation stands for its route
 * in the cold-start measurement; the others ("repeat" variants) are measured warm and over HTTP.
 * The state a scenario needs is made through the typed client (client/index.ts); the measured
 * requests are raw (autocannon and the recordings send them byte for byte), their bodies built
 * from the same typed values the client sends.
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
  /** The typed client of the local tillgate, sending `token` (default: `token` above), to make state. */
  client(token?: string): Tillgate;
  /** A string no other call of this run returns. */
  unique(): string;
  /**
   * A valid token of a new account: for scenarios that an account's limits would stop (at most 10
   * webhook endpoints per account). Its first request also looks the token up.
   */
  freshToken(): Promise<string>;
}

export interface Scenario {
  readonly operationId: string;
  readonly variant: string;
  /** The status every request of the scenario must get. */
  readonly expectStatus: number;
  /** The issue's target for DynamoDB requests per call (token cached), shown beside the figure. */
  readonly requestTarget: string;
  /** The target for TransactWriteItems per call, when the scenario is judged by it (issuance). */
  readonly transactionTarget?: string;
  /**
   * The design's minimum capacity per call (what the data model cannot go below), shown beside
   * the measured capacity: a number declared from item sizes, or computed from the calls seen.
   */
  readonly floor: Floor;
  /**
   * How much heavier one call is than a typical one (default 1): the bench sends this many times
   * fewer of them in every section, so a 1,000-code issuance does not dominate the run time.
   */
  readonly weight?: number;
  prepare(context: BenchContext, count: number): Promise<HttpRequest[]>;
  /**
   * Requests for the cold-start recordings, when they must differ from `prepare`'s: state a
   * fresh execution environment would not have cached (issueCodes reads a generator's settings
   * once per environment, so its cold requests each name a generator this server never saw).
   */
  prepareCold?(context: BenchContext, count: number): Promise<HttpRequest[]>;
  /**
   * The warm-overhead section answers every DynamoDB call with what the recording got: a handler
   * that matches answers to its request (a redemption finds its codes by key) must be sent the
   * recorded request itself, not a fresh one.
   */
  readonly warmFromRecording?: boolean;
}

interface Floor {
  /** Capacity units per call, or how to compute them from one call's wire traffic. */
  readonly units: number | ((calls: readonly WireCall[]) => number);
  /** How the figure is made, for the table: `2 items ≤1 KB, transactional = 4 WCU`. */
  readonly how: string;
}

const json = (value: unknown) => JSON.stringify(value);

/** The method and path of `operationId`, from its row: its path parameters filled in, then `query`. */
const to = (operationId: string, params: Readonly<Record<string, string | number>> = {}, query = '') => ({
  method: routeOf(operationId).method,
  path: pathOf(operationId, params) + query,
});
const headers = (context: BenchContext, extra: Record<string, string> = {}) => ({
  'X-Auth-Token': context.token,
  'Content-Type': 'application/json',
  ...extra,
});

const voidBody = (posTransactionId: string): PosBody<'voidTransaction'> => ({
  transaction: {
    site_id: 'bench-site',
    pos_transaction_id: posTransactionId,
    register_id: 'R1',
    operator_id: 'op-7',
    occurred_at: '2025-01-15T10:20:30Z',
    business_date: '2025-01-15',
    posagent_version: '9.4.1',
  },
});
const voidRequest = (context: BenchContext, posTransactionId: string): HttpRequest => ({
  ...to('voidTransaction'),
  headers: headers(context),
  body: json(voidBody(posTransactionId)),
});
const voidThrough = (context: BenchContext, posTransactionId: string) =>
  context.client().pos.POST('/v2.0/voided_transactions', { body: voidBody(posTransactionId) });

/** The store of every generator the bench makes: listCodeGenerators' `store_id` variant reads them. */
const BENCH_STORE = 4242;

/** A promotion with every term, so that redemptions and checks judge them all (and reads show them). */
const generatorBody: CoreBody<'createCodeGenerator'> = {
  code_generator: {
    generation_type: 'tillgate',
    code_length: 8,
    prefix: 'WIN-',
    store_id: BENCH_STORE,
    description: 'bench',
    discount: { type: 'percent', percent_off: 10, max_amount_off: 500, currency: 'EUR' },
    minimum_basket: { amount: 1000, currency: 'EUR' },
    valid_from: '2026-01-01T00:00:00.000Z',
    valid_until: '2099-01-01T00:00:00.000Z',
    site_ids: ['bench-site', 'bench-site-2'],
  },
};

const createRequest = (context: BenchContext, key?: string): HttpRequest => ({
  ...to('createCodeGenerator'),
  headers: headers(context, key ? { 'Idempotency-Key': key } : {}),
  body: json(generatorBody),
});
const createThrough = (context: BenchContext, key?: string) =>
  context.client().core.POST('/v1.0/codegen', { params: { header: key ? { 'Idempotency-Key': key } : {} }, body: generatorBody });

/** Events made through tillgate itself (a void writes one), so they are what the service writes. */
async function newEvents(context: BenchContext, count: number): Promise<number[]> {
  const ids: number[] = [];
  const workers = Array.from({ length: Math.min(8, count) }, async () => {
    while (ids.length < count) {
      const placeholder = ids.push(0) - 1;
      const answer = await voidThrough(context, `event-${context.unique()}`);
      const [voided] = answer.status === 200 ? answer.data.transaction.display_messages : [];
      if (voided?.message_id !== 'transaction_voided') throw new Error(`bench: could not make an event: ${answer.status} ${json(answer.error ?? answer.data)}`);
      ids[placeholder] = voided.message_content.event_id;
    }
  });
  await Promise.all(workers);
  return ids;
}

/** `count` new code generators, made through tillgate; their ids. */
async function newGenerators(context: BenchContext, count: number): Promise<number[]> {
  const ids: number[] = [];
  let started = 0;
  const workers = Array.from({ length: Math.min(8, count) }, async () => {
    while (started < count) {
      started++;
      const answer = await createThrough(context);
      if (answer.status !== 201) throw new Error(`bench: could not make a code generator: ${answer.status} ${json(answer.error)}`);
      ids.push(answer.data.code_generator.id);
    }
  });
  await Promise.all(workers);
  return ids;
}

const issueRequest = (context: BenchContext, generatorId: number, count: number): HttpRequest => ({
  ...to('issueCodes', { id: generatorId }),
  headers: headers(context),
  body: json({ count } satisfies CoreBody<'issueCodes'>),
});
const issueThrough = (context: BenchContext, generatorId: number, count: number) =>
  context.client().core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: generatorId } }, body: { count } });

/** Generators made once per run and shared by the scenarios that only read them or issue from them. */
const shared = new Map<string, Promise<number[]>>();
const sharedGenerators = (context: BenchContext, name: string, count: number) => {
  if (!shared.has(name)) shared.set(name, newGenerators(context, count));
  return shared.get(name)!;
};

/** Capacity of a transactional write of `items` items of ≤1 KB: 2 WCU each. */
const transactional = (items: number) => 2 * items;

/**
 * An issuance (without Idempotency-Key), split as the handler splits it (issuancePlan): a read of
 * the account's code quota first, then the last transaction takes its codes with the status
 * check, the event, the quota and (after pending batches) the issuance record; the pending
 * batches are finalised afterwards (the same batches, as updates).
 */
const issueScenario = (count: number): Scenario => {
  const { batches, batchSize } = issuancePlan(count, false);
  const pending = batches * batchSize;
  const transactions = 2 * batches + 1;
  const items = count + 3 + (pending > 0 ? 1 : 0) + pending;
  // After pending batches, one UpdateItem removes the issuance record's list of pending codes
  // (its capacity, on the record's size, is not in the floor below).
  const requests = transactions + (batches > 0 ? 1 : 0);
  return {
    operationId: 'issueCodes',
    variant: `count ${count}`,
    expectStatus: 201,
    // The quota's consistent GetItem, the transactions, and the pending list's removal.
    requestTarget: `${requests + 1}`,
    transactionTarget: `2 × pending / 100 + 1: ${transactions}`,
    // n codes, the event, the status check, the quota, the issuance record, and the finalising
    // update of each pending code, each ≤1 KB in a transaction.
    floor: { units: transactional(items), how: `${items} transactional items ≤1 KB × 2 WCU (${pending} pending codes finalised)` },
    weight: count <= 100 ? 4 : 25,
    prepare: async (context, n) => {
      const [generator] = await sharedGenerators(context, `issue-${count}`, 1);
      // One issuance first: the server reads a generator's settings once per environment.
      const warm = await issueThrough(context, generator!, 1);
      if (warm.status !== 201) throw new Error(`bench: could not issue a code: ${warm.status} ${json(warm.error)}`);
      return times(n, () => issueRequest(context, generator!, count));
    },
    prepareCold: async (context, n) => (await newGenerators(context, n)).map((generator) => issueRequest(context, generator, count)),
  };
};

/**
 * Issuance jobs: an account may have 3 running (and the bench runs no worker: its jobs stay
 * running), so each job request goes to a fresh account, three to each of its generators. The
 * generator's settings are read once per environment and generator.
 */
const jobRequest = (token: string, generatorId: number, count: number): HttpRequest => ({
  ...to('createIssuanceJob', { id: generatorId }),
  headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
  body: json({ count } satisfies CoreBody<'createIssuanceJob'>),
});
async function jobRequests(context: BenchContext, count: number): Promise<HttpRequest[]> {
  const requests: HttpRequest[] = [];
  while (requests.length < count) {
    const token = await context.freshToken();
    const made = await context.client(token).core.POST('/v1.0/codegen', { body: generatorBody });
    if (made.status !== 201) throw new Error(`bench: could not make a code generator: ${made.status} ${json(made.error)}`);
    for (let i = 0; i < 3 && requests.length < count; i++) requests.push(jobRequest(token, made.data.code_generator.id, 100_000));
  }
  return requests;
}

const jobScenarios: Scenario[] = [
  {
    operationId: 'createIssuanceJob',
    variant: 'count 100000',
    expectStatus: 202,
    // The quota's consistent GetItem and one transaction (the generator's settings cached: a
    // third of the calls read them, one per fresh generator).
    requestTarget: '2',
    floor: {
      units: 9,
      how: "the job, the running jobs, the quota and the generator's status check: 4 transactional items ≤1 KB × 2 WCU; the quota's consistent read 1 RCU",
    },
    prepare: (context, count) => jobRequests(context, count),
  },
  {
    operationId: 'getIssuanceJob',
    variant: 'running',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: '1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      const [generator] = await sharedGenerators(context, 'jobs', 1);
      const started = await context.client().core.POST('/v1.0/codegen/{id}/issuance_jobs', { params: { path: { id: generator! } }, body: { count: 10 } });
      if (started.status !== 202) throw new Error(`bench: could not start an issuance job: ${started.status} ${json(started.error)}`);
      return times(count, () => ({ ...to('getIssuanceJob', { id: started.data.issuance_job.id }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
];

/** `count` codes of one shared generator, issued through tillgate (in calls of up to 1000). */
async function issuedCodes(context: BenchContext, name: string, count: number): Promise<{ generator: number; codes: string[] }> {
  const [generator] = await sharedGenerators(context, name, 1);
  const codes: string[] = [];
  for (let unavailable = 0; codes.length < count; ) {
    const answer = await issueThrough(context, generator!, Math.min(500, count - codes.length));
    // A busy machine's DynamoDB Local may time a large issuance out (503): making state, try again
    // (the client repeats no issuance without an Idempotency-Key; here a second one does no harm).
    if (answer.status === 503 && ++unavailable < 5) continue;
    if (answer.status !== 201) throw new Error(`bench: could not issue codes: ${answer.status} ${json(answer.error)}`);
    codes.push(...answer.data.codes);
  }
  return { generator: generator!, codes };
}

const tillBody = (posTransactionId: string, codes: string[]): PosBody<'redeemCodes'> & PosBody<'validateCodes'> => ({
  transaction: { site_id: 'bench-site', pos_transaction_id: posTransactionId, register_id: 'R1', codes, basket: { total: 2500, currency: 'EUR' } },
});
const tillRequest = (context: BenchContext, operationId: 'redeemCodes' | 'validateCodes', posTransactionId: string, codes: string[]): HttpRequest => ({
  ...to(operationId),
  headers: headers(context),
  body: json(tillBody(posTransactionId, codes)),
});
const redeemThrough = (context: BenchContext, posTransactionId: string, codes: string[]) =>
  context.client().pos.POST('/v2.0/redeemed_codes', { body: tillBody(posTransactionId, codes) });

const redeemScenario = (codesPerCall: number): Scenario => ({
  operationId: 'redeemCodes',
  warmFromRecording: true,
  variant: codesPerCall === 1 ? 'one code' : `${codesPerCall} codes`,
  expectStatus: 200,
  requestTarget: '≤ 2',
  // Read: each code, consistent, ≤4 KB (the transaction is new: a missing item reads nothing).
  // Write: the promotion's shard (the version of its terms), each code, the transaction, the
  // event, ≤1 KB each in a transaction. The upkeep of the codes' two indexes is not counted: DynamoDB Local reports it
  // for some transactions and not others (see docs/redemption.md).
  floor: {
    units: codesPerCall + transactional(codesPerCall + 3),
    how: `${codesPerCall} consistent reads ≤4 KB + ${codesPerCall + 3} transactional items ≤1 KB × 2 WCU, index upkeep not counted`,
  },
  prepare: async (context, count) => {
    const { generator, codes } = await issuedCodes(context, `redeem-${codesPerCall}`, count * codesPerCall);
    // A promotion past its first redemptions: every shard exists (the first redemption through a
    // shard creates it, one transaction more, at most 64 times in the promotion's life).
    await everyShard(context, generator);
    // A redemption reads its generator's description (cached a minute): once, before the calls.
    const warm = await issuedCodes(context, `redeem-${codesPerCall}`, 1);
    const first = await redeemThrough(context, `R-${context.unique()}`, warm.codes.slice(-1));
    if (first.status !== 200) throw new Error(`bench: could not redeem a code: ${first.status} ${json(first.error)}`);
    return times(count, (i) => tillRequest(context, 'redeemCodes', `R-${context.unique()}`, codes.slice(i * codesPerCall, (i + 1) * codesPerCall)));
  },
  // A fresh environment has no description cached: its first redemption of a generator reads it
  // (one GetItem after the transaction). Each cold request names codes of a generator this server
  // never read, so the reference's plan has that read too.
  prepareCold: async (context, count) =>
    Promise.all(
      (await newGenerators(context, count)).map(async (generator) =>
        tillRequest(context, 'redeemCodes', `R-${context.unique()}`, await unreadCodes(context, generator, codesPerCall)),
      ),
    ),
});

/** Every shard of a promotion, created as the first redemption through each creates it (data/promotion-shards.ts). */
async function everyShard(context: BenchContext, generator: number): Promise<void> {
  const { createdAt } = await import('../../functions/data/promotion-shards.ts');
  const { generatorAt } = await import('../../functions/data/code-generators.ts');
  const { writeTogether } = await import('../../functions/data/transactions.ts');
  for (let shard = 0; shard < SHARD_COUNT; shard++) {
    // Created already (an earlier scenario on the same promotion): its condition fails, which is fine.
    await writeTogether([createdAt(context.accountId, generator, shard, 1), generatorAt(context.accountId, generator, 1)]);
  }
}

/**
 * `count` codes of `generator`, written straight into the codes table as an issuance writes them:
 * issuing through the in-process server would cache the generator's settings, which a fresh
 * execution environment does not have.
 */
async function unreadCodes(context: BenchContext, generator: number, count: number): Promise<string[]> {
  const { newCodeItem, putCode } = await import('../../functions/data/codes.ts');
  const { writeTogether } = await import('../../functions/data/transactions.ts');
  const issuedAt = new Date().toISOString();
  const codes = times(
    count,
    () =>
      `WIN-${context
        .unique()
        .replace(/[^A-Za-z0-9]/g, '')
        .toUpperCase()}`,
  );
  const written = await writeTogether(codes.map((code) => putCode(newCodeItem(context.accountId, generator, code, issuedAt, generator, false))));
  if (written.outcome !== 'written') throw new Error(`bench: could not write codes of generator ${generator}`);
  return codes;
}

const times = <T>(count: number, make: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => make(i));

// ---------------------------------------------------------------- webhook endpoints

const endpointBody = (description = 'bench'): CoreBody<'createWebhookEndpoint'> => ({
  webhook_endpoint: { url: 'https://hooks.example.com/tillgate', event_types: ['transaction.voided'], description },
});

const createEndpointRequest = (token: string): HttpRequest => ({
  ...to('createWebhookEndpoint'),
  headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
  body: json(endpointBody()),
});
const createEndpointThrough = (context: BenchContext, token: string) => context.client(token).core.POST('/v1.0/webhook_endpoints', { body: endpointBody() });

/** The bench account's endpoints (at most 10 per account): made once, shared by the scenarios that read or change them. */
let benchEndpoints: Promise<number[]> | undefined;
const sharedEndpoints = (context: BenchContext) =>
  (benchEndpoints ??= (async () => {
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      const answer = await createEndpointThrough(context, context.token);
      if (answer.status !== 201) throw new Error(`bench: could not create a webhook endpoint: ${answer.status} ${json(answer.error)}`);
      ids.push(answer.data.webhook_endpoint.id);
    }
    return ids;
  })());

/** `count` endpoints, each in an account of its own; its token and id. */
async function endpointsOfFreshAccounts(context: BenchContext, count: number) {
  const made: { token: string; id: number }[] = [];
  for (let i = 0; i < count; i++) {
    const token = await context.freshToken();
    const answer = await createEndpointThrough(context, token);
    if (answer.status !== 201) throw new Error(`bench: could not create a webhook endpoint: ${answer.status} ${json(answer.error)}`);
    made.push({ token, id: answer.data.webhook_endpoint.id });
  }
  return made;
}

/**
 * Deliveries of the first shared endpoint, written straight into its table (the bench's servers
 * run no fan-out): a full page of them.
 */
let benchDeliveries: Promise<void> | undefined;
const sharedDeliveries = (context: BenchContext, endpointId: number) =>
  (benchDeliveries ??= (async () => {
    const { newDelivery, putNewDelivery } = await import('../../functions/data/webhook-deliveries.ts');
    const now = new Date();
    for (let i = 1; i <= DEFAULT_PAGE + 1; i++) {
      await putNewDelivery(
        newDelivery(context.accountId, endpointId, { id: i, type: 'transaction.voided', resource_id: `bench/${i}`, created_at: now.toISOString() }, now),
      );
    }
  })());

const webhookScenarios: Scenario[] = [
  {
    operationId: 'createWebhookEndpoint',
    variant: 'new account',
    expectStatus: 201,
    requestTarget: '≤ 2.1 (token lookup of a new account + 1 transaction)',
    floor: { units: 1 + transactional(3), how: 'token read 1 RCU + count, endpoint, secret: 3 items ≤1 KB, transactional = 6 WCU' },
    weight: 2,
    // One token after another: hundreds of token writes at once time out connecting to DynamoDB Local.
    prepare: async (context, count) => {
      const requests: HttpRequest[] = [];
      for (let i = 0; i < count; i++) requests.push(createEndpointRequest(await context.freshToken()));
      return requests;
    },
  },
  {
    operationId: 'listWebhookEndpoints',
    variant: "the account's 10",
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: '10 items ≤ 4 KB together, consistent: 1 RCU' },
    prepare: async (context, count) => {
      await sharedEndpoints(context);
      return times(count, () => ({ ...to('listWebhookEndpoints'), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'getWebhookEndpoint',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: '1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      const ids = await sharedEndpoints(context);
      return times(count, (i) => ({ ...to('getWebhookEndpoint', { id: ids[i % ids.length]! }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'updateWebhookEndpoint',
    variant: 'new description',
    expectStatus: 200,
    requestTarget: '2',
    floor: { units: 1 + transactional(1), how: 'read 1 RCU + the endpoint, transactional: 2 WCU' },
    prepare: async (context, count) => {
      const ids = await sharedEndpoints(context);
      return times(count, (i) => ({
        ...to('updateWebhookEndpoint', { id: ids[i % ids.length]! }),
        headers: headers(context),
        body: json({ webhook_endpoint: { description: `bench ${context.unique()}` } } satisfies CoreBody<'updateWebhookEndpoint'>),
      }));
    },
  },
  {
    operationId: 'deleteWebhookEndpoint',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '≤ 2.1 (token lookup of a new account + 1 transaction)',
    floor: { units: 1 + transactional(3), how: 'token read 1 RCU + endpoint, count, secret: 3 items ≤1 KB, transactional = 6 WCU' },
    weight: 4,
    prepare: async (context, count) =>
      (await endpointsOfFreshAccounts(context, count)).map(({ token, id }) => ({ ...to('deleteWebhookEndpoint', { id }), headers: { 'X-Auth-Token': token } })),
  },
  {
    operationId: 'rotateWebhookSecret',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '2',
    floor: { units: 1 + transactional(2), how: 'read 1 RCU + check and secret, transactional: 4 WCU' },
    prepare: async (context, count) => {
      const ids = await sharedEndpoints(context);
      return times(count, (i) => ({ ...to('rotateWebhookSecret', { id: ids[i % ids.length]! }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'listWebhookDeliveries',
    variant: 'a page of 100',
    expectStatus: 200,
    requestTarget: '2',
    floor: {
      units: (calls) => 1 + pageReadUnits(calls, DEFAULT_PAGE, true),
      how: "endpoint read 1 RCU + the page's items, consistent: ceil(bytes / 4 KB) RCU",
    },
    prepare: async (context, count) => {
      const [endpoint] = await sharedEndpoints(context);
      await sharedDeliveries(context, endpoint!);
      return times(count, () => ({ ...to('listWebhookDeliveries', { id: endpoint! }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    // The bench's servers run no delivery queue, so the measured retry is one of a delivery the
    // endpoint does not have: the reads of the route, without its update and its message.
    operationId: 'retryWebhookDelivery',
    variant: 'unknown delivery (404)',
    expectStatus: 404,
    requestTarget: '2',
    floor: { units: 2, how: 'endpoint and delivery: 2 consistent reads ≤4 KB = 2 RCU' },
    prepare: async (context, count) => {
      const [endpoint] = await sharedEndpoints(context);
      return times(count, (i) => ({
        ...to('retryWebhookDelivery', { id: endpoint!, event_id: 1_000_000 + i }),
        headers: { 'X-Auth-Token': context.token },
      }));
    },
  },
];

export const scenarios: readonly Scenario[] = [
  {
    operationId: 'voidTransaction',
    variant: 'new',
    expectStatus: 200,
    requestTarget: '≤ 1.1',
    floor: { units: transactional(2), how: 'void + event: 2 items ≤1 KB, transactional = 4 WCU' },
    prepare: async (context, count) => times(count, () => voidRequest(context, `T-${context.unique()}`)),
  },
  {
    operationId: 'voidTransaction',
    variant: 'repeat',
    expectStatus: 200,
    requestTarget: '≤ 2',
    floor: { units: 1, how: 'read the first void back: 1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      // The first void through the client; the measured repeats send the same body.
      const posTransactionId = `T-${context.unique()}`;
      const first = await voidThrough(context, posTransactionId);
      if (first.status !== 200) throw new Error(`bench: first void answered ${first.status}`);
      return times(count, () => voidRequest(context, posTransactionId));
    },
  },
  {
    operationId: 'voidTransaction',
    variant: 'releasing a code',
    expectStatus: 200,
    requestTarget: '≤ 2',
    floor: {
      units: transactional(4),
      how: 'the first write fails and returns the transaction; void, 2 events, the code: 4 items ≤1 KB, transactional = 8 WCU, index upkeep not counted',
    },
    prepare: async (context, count) => {
      const { codes } = await issuedCodes(context, 'void-release', count);
      // One redemption at a time: each condition-checks the one generator, and the bench measures the void.
      const sales: string[] = [];
      for (const code of codes) {
        const posTransactionId = `VR-${context.unique()}`;
        const answer = await redeemThrough(context, posTransactionId, [code]);
        if (answer.status !== 200) throw new Error(`bench: could not redeem a code: ${answer.status} ${json(answer.error)}`);
        sales.push(posTransactionId);
      }
      return sales.map((posTransactionId) => voidRequest(context, posTransactionId));
    },
  },
  {
    operationId: 'createCodeGenerator',
    variant: 'no key',
    expectStatus: 201,
    requestTarget: '≤ 1.1',
    floor: { units: transactional(3), how: 'generator, its by_store copy, event: 3 items ≤1 KB, transactional = 6 WCU' },
    prepare: async (context, count) => times(count, () => createRequest(context)),
  },
  {
    operationId: 'createCodeGenerator',
    variant: 'new key',
    expectStatus: 201,
    requestTarget: '≤ 1.1',
    floor: { units: transactional(4), how: '+ stored response: 4 items ≤1 KB, transactional = 8 WCU' },
    prepare: async (context, count) => times(count, () => createRequest(context, `key-${context.unique()}`)),
  },
  {
    operationId: 'createCodeGenerator',
    variant: 'repeated key',
    expectStatus: 201,
    requestTarget: '–',
    floor: { units: 1, how: 'read the stored response: 1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      const key = `key-${context.unique()}`;
      const first = await createThrough(context, key);
      if (first.status !== 201) throw new Error(`bench: first create answered ${first.status}`);
      return times(count, () => createRequest(context, key));
    },
  },
  {
    operationId: 'listCodeGenerators',
    variant: 'a page',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: (calls) => pageReadUnits(calls, DEFAULT_PAGE, true), how: "the page's items, consistent: ceil(bytes / 4 KB) RCU" },
    prepare: async (context, count) => {
      // At least a full page of the account's generators (the other scenarios make more).
      await sharedGenerators(context, 'list', DEFAULT_PAGE + 1);
      return times(count, () => ({ ...to('listCodeGenerators'), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'listCodeGenerators',
    variant: 'store_id',
    expectStatus: 200,
    requestTarget: '1',
    floor: {
      units: (calls) => pageReadUnits(calls, DEFAULT_PAGE, false),
      how: "the page's projected items from the index, eventually consistent: ceil(bytes / 4 KB) / 2 RCU",
    },
    prepare: async (context, count) => {
      await sharedGenerators(context, 'list', DEFAULT_PAGE + 1);
      return times(count, () => ({ ...to('listCodeGenerators', {}, `?store_id=${BENCH_STORE}`), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'getCodeGenerator',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: '1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      const ids = await sharedGenerators(context, 'read', 20);
      return times(count, (i) => ({ ...to('getCodeGenerator', { id: ids[i % ids.length]! }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'updateCodeGenerator',
    variant: 'new description',
    expectStatus: 200,
    // The change, then the promotion's shards that exist (none here: nothing redeemed through
    // them) brought to the new version, then the mark that they are.
    requestTarget: '4, + 1 per existing shard',
    floor: {
      units: 1 + transactional(3) + 1,
      how: 'read 1 RCU + generator, its by_store copy, event, transactional: 6 WCU + shards_version 1 WCU (the shards read: none exists)',
    },
    prepare: async (context, count) => {
      // Each request changes the description to one never used (a real change every call); the
      // requests go round 32 generators so concurrent HTTP requests rarely meet on one.
      const ids = await sharedGenerators(context, 'update', 32);
      return times(count, (i) => ({
        ...to('updateCodeGenerator', { id: ids[i % ids.length]! }),
        headers: headers(context),
        body: json({ code_generator: { description: `bench ${context.unique()}` } } satisfies CoreBody<'updateCodeGenerator'>),
      }));
    },
  },
  issueScenario(100),
  issueScenario(1000),
  ...jobScenarios,
  {
    operationId: 'listCodes',
    variant: 'a page',
    expectStatus: 200,
    // The generator, and both partitions of by_redeemed read side by side (the whole list is their merge).
    requestTarget: '3 (in parallel)',
    floor: {
      units: (calls) => pageReadUnits(calls, DEFAULT_PAGE, false) + 1,
      how: "the page's projected items from the index, eventually consistent: ceil(bytes / 4 KB) / 2 RCU, + the generator (its maximum), consistent ≤4 KB: 1 RCU",
    },
    prepare: async (context, count) => {
      const { generator } = await issuedCodes(context, 'list-codes', DEFAULT_PAGE + 1);
      return times(count, () => ({ ...to('listCodes', { id: generator }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'listCodes',
    variant: 'redeemed=false',
    expectStatus: 200,
    requestTarget: '2 (in parallel)',
    floor: {
      units: (calls) => pageReadUnits(calls, DEFAULT_PAGE, false) + 1,
      how: "the page's projected items from the index, eventually consistent: ceil(bytes / 4 KB) / 2 RCU, + the generator (its maximum), consistent ≤4 KB: 1 RCU",
    },
    prepare: async (context, count) => {
      const { generator } = await issuedCodes(context, 'list-codes', DEFAULT_PAGE + 1);
      return times(count, () => ({ ...to('listCodes', { id: generator }, '?redeemed=false'), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  redeemScenario(1),
  redeemScenario(10),
  {
    operationId: 'redeemCodes',
    variant: 'retry',
    warmFromRecording: true,
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 2, how: 'read the code and the transaction back: 2 consistent reads ≤4 KB = 2 RCU' },
    prepare: async (context, count) => {
      const { codes } = await issuedCodes(context, 'redeem-retry', 1);
      const posTransactionId = `R-${context.unique()}`;
      const first = await redeemThrough(context, posTransactionId, codes);
      if (first.status !== 200) throw new Error(`bench: could not redeem a code: ${first.status} ${json(first.error)}`);
      return times(count, () => tillRequest(context, 'redeemCodes', posTransactionId, codes));
    },
  },
  {
    operationId: 'validateCodes',
    variant: 'one code',
    warmFromRecording: true,
    expectStatus: 200,
    requestTarget: '2',
    floor: { units: 2, how: 'the code (the transaction is new: a missing item reads nothing), then its generator: 2 consistent reads ≤4 KB = 2 RCU' },
    prepare: async (context, count) => {
      const { codes } = await issuedCodes(context, 'validate', 20);
      return times(count, (i) => tillRequest(context, 'validateCodes', `V-${context.unique()}`, [codes[i % codes.length]!]));
    },
  },
  {
    operationId: 'getCode',
    variant: 'issued',
    expectStatus: 200,
    requestTarget: '2 (in parallel)',
    floor: { units: 2, how: 'the code and its generator (its maximum): 2 consistent reads ≤4 KB = 2 RCU' },
    prepare: async (context, count) => {
      // Codes of a one-transaction issuance (a code of a larger one also reads its issuance record).
      const [generator] = await sharedGenerators(context, 'codes', 1);
      const answer = await issueThrough(context, generator!, 50);
      const codes = answer.status === 201 ? answer.data.codes : [];
      if (codes.length !== 50) throw new Error(`bench: could not issue codes: ${answer.status} ${json(answer.error)}`);
      return times(count, (i) => ({ ...to('getCode', { id: generator!, code: codes[i % codes.length]! }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'listCodeRedemptions',
    variant: 'a single-use code',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: 'the code, whose item names its one holder: 1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      // Codes held by one transaction each; a read changes nothing, so requests may repeat.
      const { generator, codes } = await issuedCodes(context, 'code-redemptions', 20);
      for (const code of codes) {
        const answer = await redeemThrough(context, `H-${context.unique()}`, [code]);
        if (answer.status !== 200) throw new Error(`bench: could not redeem a code: ${answer.status} ${json(answer.error)}`);
      }
      return times(count, (i) => ({
        ...to('listCodeRedemptions', { id: generator, code: codes[i % codes.length]! }),
        headers: { 'X-Auth-Token': context.token },
      }));
    },
  },
  {
    operationId: 'listEvents',
    variant: 'a page of 100',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: (calls) => pageReadUnits(calls, DEFAULT_PAGE, true), how: "the page's items, consistent: ceil(bytes / 4 KB) RCU" },
    prepare: async (context, count) => {
      await newEvents(context, DEFAULT_PAGE + 1);
      return times(count, () => ({ ...to('listEvents', {}, `?limit=${DEFAULT_PAGE}`), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'getEvent',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: '1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      // A handful of events, read in turn: a read changes nothing, so requests may repeat.
      const ids = await newEvents(context, Math.min(count, 20));
      return times(count, (i) => ({ ...to('getEvent', { id: ids[i % ids.length]! }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  {
    operationId: 'deleteEvent',
    variant: 'existing',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: '1 item ≤1 KB = 1 WCU' },
    prepare: async (context, count) =>
      (await newEvents(context, count)).map((id) => ({ ...to('deleteEvent', { id }), headers: { 'X-Auth-Token': context.token } })),
  },
  {
    // The bench's servers run no exports queue: the measured create is the route's own work (the
    // generator's read and the export's record); writing the file is the export rows' (exports.ts).
    operationId: 'createExport',
    variant: 'all codes',
    expectStatus: 202,
    requestTarget: '2',
    floor: { units: 1 + transactional(1), how: 'generator: 1 consistent read ≤4 KB = 1 RCU; the export: 1 item ≤1 KB, transactional = 2 WCU' },
    prepare: async (context, count) => {
      const [generator] = await sharedGenerators(context, 'export', 1);
      return times(count, () => ({ ...to('createExport', { id: generator! }), headers: headers(context), body: json({} satisfies CoreBody<'createExport'>) }));
    },
  },
  {
    operationId: 'getExport',
    variant: 'running',
    expectStatus: 200,
    requestTarget: '1',
    floor: { units: 1, how: '1 consistent read ≤4 KB = 1 RCU' },
    prepare: async (context, count) => {
      const [generator] = await sharedGenerators(context, 'export', 1);
      const ids: number[] = [];
      for (let i = 0; i < Math.min(count, 10); i++) {
        const created = await context.client().core.POST('/v1.0/codegen/{id}/exports', { params: { path: { id: generator! } }, body: {} });
        if (!created.data) throw new Error(`bench: could not create an export: ${created.response.status}`);
        ids.push(created.data.export.id);
      }
      return times(count, (i) => ({ ...to('getExport', { id: ids[i % ids.length]! }), headers: { 'X-Auth-Token': context.token } }));
    },
  },
  ...webhookScenarios,
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
export const mainScenarios = (): Scenario[] => routes.map((route) => scenarios.find((scenario) => scenario.operationId === route.operationId)!);

export const label = (scenario: Scenario) => `${scenario.operationId} (${scenario.variant})`;
