import { hosts, pathOf, type HostId, type Route } from '../../functions/routes.ts';
import type { CoreBody } from '../../client/index.ts';
import { Skip, type SmokeRun, type SmokeResponse } from './smoke.ts';

/**
 * The smoke checks, one per operation of the route table, keyed by operationId and run in the
 * order written here: each may use what an earlier one made (the run's generator, its codes, its
 * transaction, its events, its webhook endpoint). A route without a check here gets its token
 * check (tokenCheck: the stage serves it, and its function answers), which `npm run smoke` names;
 * a check whose operation is not in the route table (yet) is not run. The checks send through
 * the typed client (`run.call`): their requests, and the answers they verify, are typed by the
 * documents; the token checks send what no client sends (no token) raw (`run.request`).
 *
 * What the run makes says where it comes from, and is left as a shop would not see it: its code
 * generator (store_id `--store-id`, prefix SMOKE-, description "tillgate smoke run <time>") ends
 * inactive, the events it caused (and only those: matched by the resource_id of its own records)
 * are acknowledged, its webhook endpoint is deleted, and its transaction (site_id `smoke-site`,
 * pos_transaction_id `smoke-<run id>-1`) is voided, which releases the code it redeemed.
 */
export interface Check {
  /** Needs a URL that receives webhook deliveries (--webhook-url); skipped without one. */
  readonly webhook?: boolean;
  run(run: SmokeRun, state: SmokeState): Promise<void>;
}

interface FeedEvent {
  readonly id: number;
  readonly type: string;
  readonly resource_id: string;
  readonly created_at: string;
}

export interface SmokeState {
  readonly transaction: { readonly site_id: string; readonly pos_transaction_id: string };
  generator?: { id: number; body: Record<string, unknown>; etag?: string; inactive?: boolean };
  codes?: string[];
  /** Codes the run's transaction holds. */
  redeemed: string[];
  voided?: boolean;
  /** Events the run's writes must have made, as `type resource_id`. */
  readonly expectedEvents: Set<string>;
  /** The run's events as the feed listed them. */
  events?: FeedEvent[];
  readonly acknowledged: Set<number>;
  endpoint?: { id: number; etag?: string; deleted?: boolean };
  /** The event of the run whose delivery to the run's endpoint is retried. */
  delivery?: number;
  /** The run's export of its generator's codes. */
  export?: { id: number };
  /** The run's issuance job (after the export, so that the file holds only issueCodes' codes). */
  job?: { id: number; count: number };
}

const SMOKE_SITE_ID = 'smoke-site';
const SMOKE_PREFIX = 'SMOKE-';
/** A store no shop uses (override with --store-id). */
export const DEFAULT_SMOKE_STORE_ID = 999_999_999;

export function newState(run: SmokeRun): SmokeState {
  return {
    transaction: { site_id: SMOKE_SITE_ID, pos_transaction_id: `smoke-${run.runId}-1` },
    redeemed: [],
    expectedEvents: new Set(),
    acknowledged: new Set(),
  };
}

/** How an event names a void: site_id and pos_transaction_id, each URI-encoded, joined by `/`. */
const transactionResource = (state: SmokeState) =>
  `${encodeURIComponent(state.transaction.site_id)}/${encodeURIComponent(state.transaction.pos_transaction_id)}`;

const ourResources = (state: SmokeState) =>
  new Set([...(state.generator ? [String(state.generator.id)] : []), ...(state.export ? [String(state.export.id)] : []), transactionResource(state)]);

const displayIds = (answer: { data: { transaction: { display_messages: readonly { message_id: string }[] } } }): string[] =>
  answer.data.transaction.display_messages.map((message) => message.message_id);

const isSuccess = (response: SmokeResponse) => response.status >= 200 && response.status < 300;

/** JSON with the keys of every object sorted: equal values, whatever the order of their keys. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_, inner) =>
    inner && typeof inner === 'object' && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b))) : inner,
  );

const same = (actual: unknown, expected: unknown, what: string) =>
  canonical(actual) === canonical(expected) ? undefined : `${what} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`;

export const checks: Record<string, Check> = {
  // Webhook endpoints first, so that the events the run makes are delivered to the run's endpoint.
  createWebhookEndpoint: {
    webhook: true,
    async run(run, state) {
      const url = run.options.webhookUrl!;
      const response = await run.call(
        'createWebhookEndpoint',
        (api) => api.core.POST('/v1.0/webhook_endpoints', { body: { webhook_endpoint: { url, description: run.label } } }),
        {
          expect: 201,
          verify: ({ data }, { headers }) => {
            const endpoint = data.webhook_endpoint;
            return [
              same(endpoint.url, url, 'url'),
              same(endpoint.event_types, ['*'], 'event_types'),
              same(endpoint.status, 'enabled', 'status'),
              !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(endpoint.secret ?? '') && 'secret is not whsec_ and base64',
              same(headers.get('location'), pathOf('getWebhookEndpoint', { id: endpoint.id }), 'Location'),
            ];
          },
        },
      );
      // Whatever the status said, an endpoint that was made is the run's to delete.
      if (isSuccess(response) && Number.isInteger(response.json?.webhook_endpoint?.id)) state.endpoint = { id: response.json.webhook_endpoint.id };
    },
  },
  listWebhookEndpoints: {
    webhook: true,
    async run(run, state) {
      const endpoint = run.need(state.endpoint, 'a webhook endpoint', 'createWebhookEndpoint');
      await run.findListed(
        'listWebhookEndpoints',
        (api, cursor) => api.core.GET('/v1.0/webhook_endpoints', { params: { query: { limit: 1000, ...(cursor ? { cursor } : {}) } } }),
        {
          expect: 200,
          items: 'webhook_endpoints',
          match: (listed: { id: number }) => listed.id === endpoint.id,
          missing: `the run's endpoint ${endpoint.id} is not listed`,
          verifyItem: (listed: object) => 'secret' in listed && 'a listed endpoint shows its secret',
        },
      );
    },
  },
  getWebhookEndpoint: {
    webhook: true,
    async run(run, state) {
      const endpoint = run.need(state.endpoint, 'a webhook endpoint', 'createWebhookEndpoint');
      const response = await run.call('getWebhookEndpoint', (api) => api.core.GET('/v1.0/webhook_endpoints/{id}', { params: { path: { id: endpoint.id } } }), {
        expect: 200,
        verify: ({ data }) => [same(data.webhook_endpoint.id, endpoint.id, 'id'), 'secret' in data.webhook_endpoint && 'the read shows the secret'],
      });
      endpoint.etag = response.headers.get('etag') ?? undefined;
    },
  },
  updateWebhookEndpoint: {
    webhook: true,
    async run(run, state) {
      const endpoint = run.need(state.endpoint, 'a webhook endpoint', 'createWebhookEndpoint');
      const description = `${run.label} (updated)`;
      await run.call(
        'updateWebhookEndpoint',
        (api) =>
          api.core.PATCH('/v1.0/webhook_endpoints/{id}', {
            params: { path: { id: endpoint.id }, header: endpoint.etag ? { 'If-Match': endpoint.etag } : {} },
            body: { webhook_endpoint: { description } },
          }),
        {
          note: endpoint.etag ? 'If-Match' : undefined,
          expect: 200,
          verify: ({ data }) => [
            same(data.webhook_endpoint.description, description, 'description'),
            'secret' in data.webhook_endpoint && 'the answer shows the secret',
          ],
        },
      );
    },
  },
  rotateWebhookSecret: {
    webhook: true,
    async run(run, state) {
      const endpoint = run.need(state.endpoint, 'a webhook endpoint', 'createWebhookEndpoint');
      await run.call(
        'rotateWebhookSecret',
        (api) => api.core.POST('/v1.0/webhook_endpoints/{id}/rotate_secret', { params: { path: { id: endpoint.id } }, body: {} }),
        {
          expect: 200,
          verify: ({ data }) => !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(data.webhook_endpoint.secret ?? '') && 'no new whsec_ secret',
        },
      );
    },
  },

  createCodeGenerator: {
    async run(run, state) {
      const generator: CoreBody<'createCodeGenerator'>['code_generator'] = {
        generation_type: 'tillgate',
        buffer_type: 'default',
        code_length: 12,
        description: run.label,
        prefix: SMOKE_PREFIX,
        store_id: run.options.storeId,
        status: 'active',
      };
      const response = await run.call('createCodeGenerator', (api) => api.core.POST('/v1.0/codegen', { body: { code_generator: generator } }), {
        expect: 201,
        verify: ({ data }, { headers }) => [
          ...Object.entries(generator).map(([key, value]) => same(data.code_generator[key as keyof typeof generator], value, key)),
          same(headers.get('location'), pathOf('getCodeGenerator', { id: data.code_generator.id }), 'Location'),
        ],
      });
      const id = response.json?.code_generator?.id;
      // Whatever the status said, a generator that was made is the run's to deactivate.
      if (isSuccess(response) && Number.isInteger(id)) {
        state.generator = { id, body: response.json.code_generator };
        state.expectedEvents.add(`code_generator.created ${id}`);
      }
    },
  },
  listCodeGenerators: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      // The smoke store keeps the generators of earlier runs (inactive): ours is on the last page.
      await run.findListed(
        'listCodeGenerators',
        (api, cursor) => api.core.GET('/v1.0/codegen', { params: { query: { store_id: run.options.storeId, limit: 1000, ...(cursor ? { cursor } : {}) } } }),
        {
          expect: 200,
          items: 'code_generators',
          match: (listed: { id: number }) => listed.id === generator.id,
          missing: `the run's generator ${generator.id} is not listed under store_id ${run.options.storeId}`,
        },
      );
    },
  },
  getCodeGenerator: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      const read = (header: { 'If-None-Match'?: string } = {}) => run.api.core.GET('/v1.0/codegen/{id}', { params: { path: { id: generator.id }, header } });
      const response = await run.call('getCodeGenerator', () => read(), {
        expect: 200,
        verify: ({ data }) => same(data.code_generator, generator.body, 'code_generator'),
      });
      const etag = response.headers.get('etag');
      if (!response.passed || !etag) return;
      generator.etag = etag;
      await run.call('getCodeGenerator', () => read({ 'If-None-Match': etag }), { note: 'If-None-Match', expect: 304 });
    },
  },
  issueCodes: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      const response = await run.call(
        'issueCodes',
        (api) => api.core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: generator.id } }, body: { count: 3 } }),
        {
          expect: 201,
          verify: ({ data }) => {
            // Before anything is reported: a problem may quote a code.
            run.conceal(...data.codes);
            return [
              same(data.code_generator_id, generator.id, 'code_generator_id'),
              data.codes.length !== 3 && `${data.codes.length} codes, expected 3`,
              data.codes.some((code) => !new RegExp(`^${SMOKE_PREFIX}[2-9A-HJ-NP-Z]{12}$`).test(code)) &&
                `codes are not ${SMOKE_PREFIX} and 12 characters of the tillgate alphabet`,
            ];
          },
        },
      );
      if (Array.isArray(response.json?.codes)) run.conceal(...response.json.codes.filter((code: unknown) => typeof code === 'string'));
      if (response.passed) {
        state.codes = response.json.codes;
        state.expectedEvents.add(`codes.issued ${generator.id}`);
      }
    },
  },
  getCode: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      const [code] = run.need(state.codes, 'issued codes', 'issueCodes');
      // In lower case, as a cashier may type it: the answer spells it as issued.
      await run.call(
        'getCode',
        (api) => api.core.GET('/v1.0/codegen/{id}/codes/{code}', { params: { path: { id: generator.id, code: code!.toLowerCase() } } }),
        {
          note: 'lower case',
          expect: 200,
          verify: ({ data }) => [
            same(data.code.code, code, 'code'),
            same(data.code.code_generator_id, generator.id, 'code_generator_id'),
            same(data.code.times_redeemed, 0, 'times_redeemed'),
            same(data.code.max_redemptions_per_code, 1, 'max_redemptions_per_code'),
          ],
        },
      );
    },
  },
  listCodes: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      const codes = run.need(state.codes, 'issued codes', 'issueCodes');
      // The list reads an index, which may lag the issuance by about a second.
      await run.poll('listCodes', (api) => api.core.GET('/v1.0/codegen/{id}/codes', { params: { path: { id: generator.id }, query: { limit: 1000 } } }), {
        expect: 200,
        verify: ({ data }) => {
          const listed = new Set(data.codes.map((entry) => entry.code));
          const missing = codes.filter((code) => !listed.has(code));
          return missing.length > 0 && `${missing.length} of the ${codes.length} codes issued are not listed`;
        },
      });
    },
  },
  createExport: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      const response = await run.call(
        'createExport',
        (api) => api.core.POST('/v1.0/codegen/{id}/exports', { params: { path: { id: generator.id } }, body: {} }),
        {
          expect: 202,
          verify: ({ data }, { headers }) => [
            same(data.export.code_generator_id, generator.id, 'code_generator_id'),
            same(data.export.status, 'running', 'status'),
            same(headers.get('location'), pathOf('getExport', { id: data.export.id }), 'Location'),
          ],
        },
      );
      if (response.passed) state.export = { id: response.json.export.id };
    },
  },
  getExport: {
    async run(run, state) {
      const exported = run.need(state.export, 'an export', 'createExport');
      const codes = run.need(state.codes, 'issued codes', 'issueCodes');
      // Written by a worker: asked again until it has completed.
      const response = await run.poll('getExport', (api) => api.core.GET('/v1.0/exports/{id}', { params: { path: { id: exported.id } } }), {
        expect: 200,
        verify: ({ data }) => [
          same(data.export.status, 'completed', 'status'),
          same(data.export.rows, codes.length, 'rows'),
          !data.export.download_url && 'no download_url',
        ],
      });
      if (response.passed) state.expectedEvents.add(`export.completed ${exported.id}`);
    },
  },
  createIssuanceJob: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      const count = 10;
      const response = await run.call(
        'createIssuanceJob',
        (api) => api.core.POST('/v1.0/codegen/{id}/issuance_jobs', { params: { path: { id: generator.id } }, body: { count } }),
        {
          expect: 202,
          verify: ({ data }, { headers }) => [
            same(data.issuance_job.code_generator_id, generator.id, 'code_generator_id'),
            same(data.issuance_job.status, 'running', 'status'),
            same(headers.get('location'), pathOf('getIssuanceJob', { id: data.issuance_job.id }), 'Location'),
          ],
        },
      );
      if (response.passed) state.job = { id: response.json.issuance_job.id, count };
    },
  },
  getIssuanceJob: {
    async run(run, state) {
      const job = run.need(state.job, 'an issuance job', 'createIssuanceJob');
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      // Run by a worker: asked again until it has completed.
      const response = await run.poll('getIssuanceJob', (api) => api.core.GET('/v1.0/issuance_jobs/{id}', { params: { path: { id: job.id } } }), {
        expect: 200,
        verify: ({ data }) => [same(data.issuance_job.status, 'completed', 'status'), same(data.issuance_job.issued, job.count, 'issued')],
      });
      if (response.passed) state.expectedEvents.add(`codes.issued ${generator.id}`);
    },
  },
  validateCodes: {
    async run(run, state) {
      const [code] = run.need(state.codes, 'issued codes', 'issueCodes');
      await run.call('validateCodes', (api) => api.pos.POST('/v2.0/validated_codes', { body: { transaction: { ...state.transaction, codes: [code!] } } }), {
        expect: 200,
        verify: (answer) => [same(displayIds(answer), ['code_valid'], 'message_ids'), answer.data.transaction.errors.length > 0 && 'errors is not empty'],
      });
    },
  },
  redeemCodes: {
    async run(run, state) {
      const [code] = run.need(state.codes, 'issued codes', 'issueCodes');
      const response = await run.call(
        'redeemCodes',
        (api) => api.pos.POST('/v2.0/redeemed_codes', { body: { transaction: { ...state.transaction, codes: [code!] } } }),
        {
          expect: 200,
          verify: (answer) => same(displayIds(answer), ['code_redeemed'], 'message_ids'),
        },
      );
      if (response.status === 200) {
        state.redeemed.push(code!);
        state.expectedEvents.add(`codes.redeemed ${transactionResource(state)}`);
      }
    },
  },
  listCodeRedemptions: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      const [code] = run.need(state.redeemed.length > 0 ? state.redeemed : undefined, 'a code the run redeemed', 'redeemCodes');
      // Consistent reads: the run's transaction holds the code at once, and alone.
      await run.call(
        'listCodeRedemptions',
        (api) => api.core.GET('/v1.0/codegen/{id}/codes/{code}/redemptions', { params: { path: { id: generator.id, code: code! } } }),
        {
          expect: 200,
          verify: ({ data }) => [
            same(
              data.redemptions.map((redemption) => [redemption.site_id, redemption.pos_transaction_id]),
              [[state.transaction.site_id, state.transaction.pos_transaction_id]],
              'the transactions holding the code',
            ),
            same(data.next_cursor, null, 'next_cursor'),
          ],
        },
      );
    },
  },
  voidTransaction: {
    async run(run, state) {
      await voidTheTransaction(run, state);
      if (!state.voided) return;
      // A till retries: the same void answers its first response and writes nothing.
      await run.call('voidTransaction', (api) => api.pos.POST('/v2.0/voided_transactions', { body: { transaction: state.transaction } }), {
        note: 'repeated',
        expect: 200,
        verify: (_, { headers }) => same(headers.get('idempotent-replayed'), 'true', 'Idempotent-Replayed'),
      });
    },
  },
  updateCodeGenerator: {
    async run(run, state) {
      const generator = run.need(state.generator, 'a code generator', 'createCodeGenerator');
      await deactivate(run, state, generator, { ifMatch: generator.etag });
    },
  },
  listEvents: {
    async run(run, state) {
      if (state.expectedEvents.size === 0) throw new Skip('needs records of the run (createCodeGenerator and voidTransaction made none)');
      state.events = await findOurEvents(run, state, undefined);
    },
  },
  getEvent: {
    async run(run, state) {
      const [event] = run.need(state.events?.length ? state.events : undefined, 'an event of the run', 'listEvents');
      const read = (header: { 'If-None-Match'?: string } = {}) => run.api.core.GET('/v1.0/events/{id}', { params: { path: { id: event!.id }, header } });
      const response = await run.call('getEvent', () => read(), {
        expect: 200,
        verify: ({ data }) => same(data.event, event, 'event'),
      });
      const etag = response.headers.get('etag');
      if (response.passed && etag) {
        await run.call('getEvent', () => read({ 'If-None-Match': etag }), { note: 'If-None-Match', expect: 304 });
      }
    },
  },
  deleteEvent: {
    async run(run, state) {
      const events = run.need(state.events?.length ? state.events : undefined, 'events of the run', 'listEvents');
      await acknowledge(run, state, events, undefined);
      const [first] = events.filter((event) => state.acknowledged.has(event.id));
      if (first && run.has('getEvent')) {
        await run.call('getEvent', (api) => api.core.GET('/v1.0/events/{id}', { params: { path: { id: first.id } } }), { note: 'acknowledged', expect: 404 });
      }
    },
  },

  // Deliveries last: by now the run has made its events.
  listWebhookDeliveries: {
    webhook: true,
    async run(run, state) {
      const endpoint = run.need(state.endpoint, 'a webhook endpoint', 'createWebhookEndpoint');
      const ours = new Set(run.need(state.events?.length ? state.events : undefined, 'events of the run', 'listEvents').map((event) => event.id));
      // A first attempt leaves within seconds of the event's commit.
      const response = await run.poll(
        'listWebhookDeliveries',
        (api) => api.core.GET('/v1.0/webhook_endpoints/{id}/deliveries', { params: { path: { id: endpoint.id }, query: { limit: 1000 } } }),
        {
          expect: 200,
          verify: ({ data }) => {
            const attempted = data.deliveries.filter((delivery) => ours.has(delivery.event_id) && delivery.attempts > 0);
            if (attempted.length === 0) return `no delivery of the run's ${ours.size} events was attempted within ${run.options.settleMs / 1000} s`;
            const delivered = attempted.find((delivery) => delivery.status === 'succeeded');
            return !delivered && `the receiver at --webhook-url answered ${attempted[0]!.last_response_status ?? 'nothing'}, not a 2xx`;
          },
        },
      );
      const delivery = response.json?.deliveries?.find((candidate: { event_id: number }) => ours.has(candidate.event_id));
      if (delivery) state.delivery = delivery.event_id;
    },
  },
  retryWebhookDelivery: {
    webhook: true,
    async run(run, state) {
      const endpoint = run.need(state.endpoint, 'a webhook endpoint', 'createWebhookEndpoint');
      const eventId = run.need(state.delivery, "a delivery of the run's events", 'listWebhookDeliveries');
      await run.call(
        'retryWebhookDelivery',
        (api) =>
          api.core.POST('/v1.0/webhook_endpoints/{id}/deliveries/{event_id}/retry', { params: { path: { id: endpoint.id, event_id: eventId } }, body: {} }),
        {
          expect: 202,
          verify: ({ data }) => [same(data.delivery.event_id, eventId, 'event_id'), same(data.delivery.status, 'pending', 'status')],
        },
      );
    },
  },
  deleteWebhookEndpoint: {
    webhook: true,
    async run(run, state) {
      const endpoint = run.need(state.endpoint, 'a webhook endpoint', 'createWebhookEndpoint');
      await deleteEndpoint(run, endpoint, undefined);
      if (endpoint.deleted && run.has('getWebhookEndpoint')) {
        await run.call('getWebhookEndpoint', (api) => api.core.GET('/v1.0/webhook_endpoints/{id}', { params: { path: { id: endpoint.id } } }), {
          note: 'deleted',
          expect: 404,
        });
      }
    },
  },
};

/** Routes of the table without a check written above: each gets its token check (tokenCheck). */
export function routesWithoutCheck(table: readonly Route[]): Route[] {
  return table.filter((route) => !Object.hasOwn(checks, route.operationId));
}

/**
 * The check of a route that has none written above: the stage serves it, and the route's own
 * function answers, refusing a request without a token (401, in its host's shape) before it
 * reads anything else. A written check says more; until there is one, this one runs.
 */
function tokenCheck(route: Route): Check {
  const params = Object.fromEntries([...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => [name!, '1']));
  return {
    async run(run) {
      await run.request(route.operationId, {
        anonymous: true,
        params,
        note: 'no token (no check written yet)',
        body: route.body ? {} : undefined,
        expect: 401,
      });
    },
  };
}

/** The checks a run makes, in order: those written above, then a token check for each route without one. */
export function checksOf(table: readonly Route[]): [string, Check][] {
  return [...Object.entries(checks), ...routesWithoutCheck(table).map((route): [string, Check] => [route.operationId, tokenCheck(route)])];
}

/**
 * The answers every stage gives before any operation: an unknown route is a 404, a known path
 * under another method a 405 with Allow, and a request without a token a 401, each in its host's
 * error shape. An answer in the other host's shape
 * means the two URLs are swapped (or a custom domain is mapped to the wrong API).
 */
export async function gatewayChecks(run: SmokeRun, state: SmokeState): Promise<void> {
  for (const host of Object.keys(hosts) as HostId[]) {
    const other: HostId = host === 'core' ? 'pos' : 'core';
    // An answer in the other host's error shape says more than its status: the URLs are swapped.
    const recordNamingSwap = (response: SmokeResponse) => {
      const swapped = !response.passed && response.status > 0 && run.options.checker.errorShapeProblems(other, response.text).length === 0;
      const problems = swapped
        ? [`--${host}-url answers in the ${other} host's error shape: are --core-url and --pos-url swapped?`]
        : response.outcome.problems;
      run.record({ ...response.outcome, problems });
    };
    recordNamingSwap(
      await run.probe('unknownRoute', host, 'GET', `${hosts[host].versionPrefix}/smoke-no-such-route`, { expect: 404, answeredBy: 'gateway', tentative: true }),
    );

    // A known path under a method it does not serve: 405 with Allow naming those it does (in
    // AWS the stage's mock methods answer it).
    const plain = run.routes.filter((candidate) => candidate.host === host && !candidate.path.includes('{'));
    const path = plain[0]?.path;
    if (path) {
      const allow = run.routes.filter((candidate) => candidate.host === host && candidate.path === path).map((candidate) => candidate.method);
      const method = ['DELETE', 'PATCH', 'POST', 'GET'].find((candidate) => !allow.includes(candidate as Route['method']))!;
      const response = await run.probe('methodNotAllowed', host, method, path, {
        expect: 405,
        answeredBy: 'gateway',
        tentative: true,
        hints: { 404: "the stage answers a known path's other methods as an unknown route: its 405 methods are missing, or it runs an older version" },
        verify: ({ headers }) => {
          const given = headers.get('allow');
          if (given === null) return 'no Allow header';
          const listed = given
            .split(',')
            .map((name) => name.trim())
            .sort();
          return same(listed, [...allow].sort(), 'Allow') && `header Allow is ${JSON.stringify(given)}, expected ${allow.join(', ')}`;
        },
      });
      recordNamingSwap(response);
    }

    // A route of this host called without a token: the function's own 401, in the host's shape.
    const route = plain.find((candidate) => candidate.method === 'GET') ?? plain[0];
    if (!route) continue;
    await run.request(route.operationId, {
      anonymous: true,
      note: 'no token',
      body:
        route.method === 'GET'
          ? undefined
          : route.host === 'pos'
            ? { transaction: { ...state.transaction, pos_transaction_id: `smoke-${run.runId}-anonymous` } }
            : {},
      expect: 401,
    });
  }
}

async function voidTheTransaction(run: SmokeRun, state: SmokeState, note?: string) {
  const released = [...state.redeemed];
  const response = await run.call('voidTransaction', (api) => api.pos.POST('/v2.0/voided_transactions', { body: { transaction: state.transaction } }), {
    note,
    expect: 200,
    verify: (answer) => [
      same(displayIds(answer), ['transaction_voided', ...released.map(() => 'code_released')], 'message_ids'),
      answer.data.transaction.errors.length > 0 && 'errors is not empty',
    ],
  });
  if (response.status === 200) {
    state.voided = true;
    state.expectedEvents.add(`transaction.voided ${transactionResource(state)}`);
    if (released.length > 0) state.expectedEvents.add(`codes.released ${transactionResource(state)}`);
  }
}

async function deactivate(
  run: SmokeRun,
  state: SmokeState,
  generator: NonNullable<SmokeState['generator']>,
  { ifMatch, note }: { ifMatch?: string; note?: string },
) {
  const response = await run.call(
    'updateCodeGenerator',
    (api) =>
      api.core.PATCH('/v1.0/codegen/{id}', {
        params: { path: { id: generator.id }, header: ifMatch ? { 'If-Match': ifMatch } : {} },
        body: { code_generator: { status: 'inactive' } },
      }),
    {
      note: note ?? (ifMatch ? 'If-Match' : undefined),
      expect: 200,
      verify: ({ data }) => [
        same(data.code_generator.status, 'inactive', 'status'),
        !(data.code_generator.updated_at > String(generator.body.updated_at)) && 'updated_at did not advance',
      ],
    },
  );
  if (response.status === 200 && response.json?.code_generator?.status === 'inactive') {
    generator.inactive = true;
    state.expectedEvents.add(`code_generator.updated ${generator.id}`);
  }
}

/**
 * The run's events in the feed: every page, from the first (the feed is a queue, and the run's
 * events are the newest), until all the events the run's writes made are there or `settleMs`
 * has passed. Only the first page is reported, unless another one fails.
 */
async function findOurEvents(run: SmokeRun, state: SmokeState, note: string | undefined): Promise<FeedEvent[]> {
  const resources = ourResources(state);
  let found: FeedEvent[] = [];
  let first: SmokeResponse | undefined;
  let tries = 0;
  const missing = () => [...state.expectedEvents].filter((key) => !found.some((event) => `${event.type} ${event.resource_id}` === key));
  const deadline = Date.now() + run.options.settleMs;
  for (;;) {
    tries++;
    found = [];
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      const from = cursor;
      const response = await run.call(
        'listEvents',
        (api) => api.core.GET('/v1.0/events', { params: { query: { limit: 1000, ...(from ? { cursor: from } : {}) } } }),
        {
          expect: 200,
          note,
          tentative: page === 0,
          quiet: page > 0,
        },
      );
      if (page === 0) first = response;
      if (!response.passed) {
        if (page === 0) run.record(response.outcome);
        return found;
      }
      found.push(...response.json.events.filter((event: FeedEvent) => resources.has(event.resource_id)));
      cursor = response.json.next_cursor ?? undefined;
      if (!cursor) break;
      if (page === 99) {
        run.record({ ...response.outcome, result: 'fail', problems: ["over 100,000 live events in the feed: the run's own were not all read"] });
        return found;
      }
    }
    if (missing().length === 0 || Date.now() >= deadline) break;
    await new Promise((done) => setTimeout(done, 250));
  }
  const absent = missing();
  const notes = [first!.outcome.note, tries > 1 ? `${tries} tries` : undefined].filter(Boolean).join(', ') || undefined;
  run.record({
    ...first!.outcome,
    note: notes,
    result: absent.length > 0 ? 'fail' : 'ok',
    problems: absent.length > 0 ? [`the feed lacks the run's events ${absent.join(', ')}`] : [],
  });
  return found;
}

async function acknowledge(run: SmokeRun, state: SmokeState, events: readonly FeedEvent[], note: string | undefined) {
  for (const event of events) {
    if (state.acknowledged.has(event.id)) continue;
    const response = await run.call('deleteEvent', (api) => api.core.DELETE('/v1.0/events/{id}', { params: { path: { id: event.id } } }), {
      note: [note, event.type].filter(Boolean).join(', '),
      expect: 200,
    });
    if (response.status === 200) state.acknowledged.add(event.id);
  }
}

async function deleteEndpoint(run: SmokeRun, endpoint: NonNullable<SmokeState['endpoint']>, note: string | undefined) {
  const response = await run.call(
    'deleteWebhookEndpoint',
    (api) => api.core.DELETE('/v1.0/webhook_endpoints/{id}', { params: { path: { id: endpoint.id } } }),
    {
      note,
      expect: 200,
    },
  );
  if (response.status === 200) endpoint.deleted = true;
}

/**
 * Whatever the checks left because one failed: the generator made inactive, the transaction
 * voided (which releases its codes), the run's events acknowledged, its webhook endpoint
 * deleted. Each step reports a line noted `cleanup`; a complete run has nothing left to do.
 */
export async function cleanUp(run: SmokeRun, state: SmokeState): Promise<void> {
  const note = 'cleanup';
  if (state.endpoint && !state.endpoint.deleted && run.has('deleteWebhookEndpoint')) await deleteEndpoint(run, state.endpoint, note);
  if (state.generator && !state.generator.inactive && run.has('updateCodeGenerator')) {
    await deactivate(run, state, state.generator, { note });
  }
  if (state.redeemed.length > 0 && !state.voided && run.has('voidTransaction')) await voidTheTransaction(run, state, note);
  const acknowledgedAll =
    state.events !== undefined &&
    [...state.expectedEvents].every((key) => state.events!.some((event) => `${event.type} ${event.resource_id}` === key && state.acknowledged.has(event.id)));
  if (state.expectedEvents.size > 0 && !acknowledgedAll && run.has('listEvents') && run.has('deleteEvent')) {
    await acknowledge(run, state, await findOurEvents(run, state, note), note);
  }
}
