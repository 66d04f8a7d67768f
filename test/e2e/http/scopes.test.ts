import '../../support/webhooks/env.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, newToken, type TokenScope } from '../../../functions/http/tokens.ts';
import { saveApiKey } from '../../../functions/data/api-keys.ts';
import { newDelivery, putNewDelivery } from '../../../functions/data/webhook-deliveries.ts';
import { routes, type Route } from '../../../functions/routes.ts';
import { newAccount } from '../../support/accounts.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call } from '../../support/http.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import { eventsOf } from '../../support/records.ts';
import { startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';

/**
 * Scopes, walking the route table: every route under a token of every scope answers its success
 * status when the scope allows it, else 403 in the host's envelope, before anything else of the
 * request is read. A route without a success request below is walked with one made from its row
 * (every path parameter 1, an empty body): allowed, it must get past the scope check (no 401 or
 * 403); its success request, once written, says which status.
 */
const ctx = useLocalApi();
// The retry route sends to the delivery queue: the local stack's queue and sender, delivering to a
// receiver. No stream reader: the retry's delivery is written as the fan-out writes it.
let webhooks: LocalWebhooks;
let receiver: Receiver;
beforeAll(async () => {
  webhooks = await startTestWebhooks({ streams: false });
  receiver = await startReceiver();
});
afterAll(async () => {
  await webhooks?.close();
  await receiver?.close();
});

interface Setup {
  /** A token of scope `all` in the same account, to create what a request needs. */
  readonly token: string;
  readonly accountId: number;
}
interface SuccessRequest {
  readonly path: string;
  readonly body?: unknown;
  readonly status: number | 'past the scope check';
}

const createGenerator = async ({ token }: Setup): Promise<number> => {
  const response = await send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator.id;
};
const issueOne = (setup: Setup, id: number) =>
  send(ctx.api, setup.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count: 1 } }));
const anIssuedCode = async (setup: Setup): Promise<{ id: number; code: string }> => {
  const id = await createGenerator(setup);
  const issued = await issueOne(setup, id);
  expect(issued.status, issued.text).toBe(201);
  return { id, code: issued.json.codes[0] };
};
const anEvent = async (setup: Setup): Promise<number> => {
  const generator = await createGenerator(setup);
  const event = (await eventsOf(setup.accountId)).find((e) => e.resource_id === String(generator));
  return event!.id;
};

/** Deletes the account's webhook endpoints (an account has at most 10), so that one more fits. */
const roomForAnEndpoint = async ({ token }: Setup): Promise<void> => {
  const listed = await send(ctx.api, token, ({ core }) => core.GET('/v1.0/webhook_endpoints'));
  expect(listed.status, listed.text).toBe(200);
  for (const { id } of listed.json.webhook_endpoints as { id: number }[]) {
    const deleted = await send(ctx.api, token, ({ core }) => core.DELETE('/v1.0/webhook_endpoints/{id}', { params: { path: { id } } }));
    expect(deleted.status, deleted.text).toBe(200);
  }
};
const anEndpointBody = () => ({ webhook_endpoint: { url: `${receiver.url}/hooks/scopes-${randomUUID()}` } });
const anEndpoint = async (setup: Setup): Promise<number> => {
  await roomForAnEndpoint(setup);
  const response = await send(ctx.api, setup.token, ({ core }) => core.POST('/v1.0/webhook_endpoints', { body: anEndpointBody() }));
  expect(response.status, response.text).toBe(201);
  return response.json.webhook_endpoint.id;
};
/** An endpoint and the delivery of an event made after it, written as the fan-out writes it. */
const aDelivery = async (setup: Setup): Promise<{ endpointId: number; eventId: number }> => {
  const endpointId = await anEndpoint(setup);
  const eventId = await anEvent(setup);
  const event = (await eventsOf(setup.accountId)).find((e) => e.id === eventId)!;
  expect(await putNewDelivery(newDelivery(setup.accountId, endpointId, event, new Date()))).toBe(true);
  return { endpointId, eventId };
};

/** One request per operation that succeeds for a token allowed to make it. */
const SUCCESS: Record<string, (setup: Setup) => Promise<SuccessRequest>> = {
  createCodeGenerator: async () => ({ path: '/v1.0/codegen', body: { code_generator: winterPromotion }, status: 201 }),
  listCodeGenerators: async () => ({ path: '/v1.0/codegen', status: 200 }),
  getCodeGenerator: async (setup) => ({ path: `/v1.0/codegen/${await createGenerator(setup)}`, status: 200 }),
  updateCodeGenerator: async (setup) => ({
    path: `/v1.0/codegen/${await createGenerator(setup)}`,
    body: { code_generator: { status: 'inactive' } },
    status: 200,
  }),
  issueCodes: async (setup) => ({ path: `/v1.0/codegen/${await createGenerator(setup)}/codes`, body: { count: 1 }, status: 201 }),
  getCode: async (setup) => {
    const id = await createGenerator(setup);
    const issued = await issueOne(setup, id);
    return { path: `/v1.0/codegen/${id}/codes/${issued.json.codes[0]}`, status: 200 };
  },
  listEvents: async () => ({ path: '/v1.0/events', status: 200 }),
  getEvent: async (setup) => ({ path: `/v1.0/events/${await anEvent(setup)}`, status: 200 }),
  deleteEvent: async (setup) => ({ path: `/v1.0/events/${await anEvent(setup)}`, status: 200 }),
  createWebhookEndpoint: async (setup) => {
    await roomForAnEndpoint(setup);
    return { path: '/v1.0/webhook_endpoints', body: anEndpointBody(), status: 201 };
  },
  listWebhookEndpoints: async () => ({ path: '/v1.0/webhook_endpoints', status: 200 }),
  getWebhookEndpoint: async (setup) => ({ path: `/v1.0/webhook_endpoints/${await anEndpoint(setup)}`, status: 200 }),
  updateWebhookEndpoint: async (setup) => ({
    path: `/v1.0/webhook_endpoints/${await anEndpoint(setup)}`,
    body: { webhook_endpoint: { description: 'changed' } },
    status: 200,
  }),
  deleteWebhookEndpoint: async (setup) => ({ path: `/v1.0/webhook_endpoints/${await anEndpoint(setup)}`, status: 200 }),
  rotateWebhookSecret: async (setup) => ({ path: `/v1.0/webhook_endpoints/${await anEndpoint(setup)}/rotate_secret`, status: 200 }),
  listWebhookDeliveries: async (setup) => ({ path: `/v1.0/webhook_endpoints/${await anEndpoint(setup)}/deliveries`, status: 200 }),
  retryWebhookDelivery: async (setup) => {
    const { endpointId, eventId } = await aDelivery(setup);
    return { path: `/v1.0/webhook_endpoints/${endpointId}/deliveries/${eventId}/retry`, status: 202 };
  },
  voidTransaction: async () => ({
    path: '/v2.0/voided_transactions',
    body: { transaction: { site_id: 'S1', pos_transaction_id: randomUUID() } },
    status: 200,
  }),
  listCodes: async (setup) => ({ path: `/v1.0/codegen/${(await anIssuedCode(setup)).id}/codes`, status: 200 }),
  listCodeRedemptions: async (setup) => {
    const { id, code } = await anIssuedCode(setup);
    return { path: `/v1.0/codegen/${id}/codes/${code}/redemptions`, status: 200 };
  },
  redeemCodes: async (setup) => ({
    path: '/v2.0/redeemed_codes',
    body: { transaction: { site_id: 'S1', pos_transaction_id: randomUUID(), codes: [(await anIssuedCode(setup)).code] } },
    status: 200,
  }),
  validateCodes: async (setup) => ({
    path: '/v2.0/validated_codes',
    body: { transaction: { site_id: 'S1', pos_transaction_id: randomUUID(), codes: [(await anIssuedCode(setup)).code] } },
    status: 200,
  }),
};

const SCOPES: readonly TokenScope[] = ['pos', 'core', 'all'];
const allows = (scope: TokenScope, route: Route) => scope === 'all' || scope === route.scope;

/** A second token of the account, of the given scope (or none: a key written before scopes). */
async function tokenOf(accountId: number, scope: TokenScope | undefined): Promise<string> {
  const token = newToken();
  await saveApiKey({
    token_hash: hashToken(token),
    key_id: `key_${randomUUID().slice(0, 16)}`,
    account_id: accountId,
    name: `scope ${scope ?? 'none'}`,
    ...(scope ? { scope } : {}),
    created_at: new Date().toISOString(),
  });
  return token;
}

function expectForbidden(route: Route, response: Awaited<ReturnType<typeof call>>, message: string) {
  expect(response.status, `${route.operationId}: ${response.text}`).toBe(403);
  expect(response.headers.get('etag')).toBeNull();
  if (route.host === 'core') {
    expect(response.json).toEqual({ errors: [{ message }] });
  } else {
    const noun = route.till.noun.charAt(0).toUpperCase() + route.till.noun.slice(1);
    expect(response.json).toEqual({
      transaction: {
        errors: [{ message }],
        display_messages: [
          {
            message: `${noun} refused: this till's token is not allowed to do this. Ask a manager to give the till a token for tills.`,
            message_id: 'forbidden',
            message_content: { request_id: response.headers.get('x-request-id') },
            priority: 1,
          },
        ],
      },
    });
  }
}

/** The request of a route without a success request: from its row, answered anything but 401 or 403 when allowed. */
const fromRow = async (route: Route): Promise<SuccessRequest> => ({
  path: route.path.replace(/\{[^}]+\}/g, '1'),
  ...(route.body ? { body: {} } : {}),
  status: 'past the scope check',
});
const successOf = (route: Route, setup: Setup) => SUCCESS[route.operationId]?.(setup) ?? fromRow(route);

describe('scopes, walking the route table', () => {
  describe.each(SCOPES)('a token of scope %s', (scope) => {
    it.each(routes.map((route) => [`${route.method} ${route.path} (${route.operationId}, needs ${route.scope})`, route] as const))('%s', async (_, route) => {
      const setup = { token: ctx.account.token, accountId: ctx.account.accountId };
      const token = await tokenOf(ctx.account.accountId, scope);
      const request = await successOf(route, setup);
      const before = await eventsOf(ctx.account.accountId);
      const response = await call(ctx.api, route.host, route.method, request.path, { token, body: request.body });
      if (allows(scope, route) && request.status === 'past the scope check') {
        expect([401, 403], response.text).not.toContain(response.status);
      } else if (allows(scope, route)) {
        expect(response.status, response.text).toBe(request.status);
      } else {
        expectForbidden(route, response, `This token's scope is ${scope}; this operation needs a token of scope ${route.scope} or all`);
        // Refused before anything was done.
        expect(await eventsOf(ctx.account.accountId)).toEqual(before);
      }
    });
  });

  it.each(routes.map((route) => [route.operationId, route] as const))(
    '%s: the scope is checked right after the token, before the body, the path and the record',
    async (_, route) => {
      const token = await tokenOf(ctx.account.accountId, route.scope === 'pos' ? 'core' : 'pos');
      const path = route.path.replace('{id}', 'not-an-id').replace('{code}', 'x');
      const response = await call(ctx.api, route.host, route.method, path, {
        token,
        body: route.method === 'GET' || route.method === 'DELETE' ? undefined : '{not json',
      });
      expect(response.status, response.text).toBe(403);
    },
  );

  it.each(routes.map((route) => [route.operationId, route] as const))(
    '%s: a key written before scopes existed (no scope) is refused, saying it has none',
    async (_, route) => {
      const token = await tokenOf(ctx.account.accountId, undefined);
      const request = await successOf(route, { token: ctx.account.token, accountId: ctx.account.accountId });
      const response = await call(ctx.api, route.host, route.method, request.path, { token, body: request.body });
      expectForbidden(
        route,
        response,
        'This token has no scope (it was issued before scopes existed) and may call nothing; ask the operator to give it one, or for a new token',
      );
    },
  );

  it('a till token cannot mint codes, reactivate a generator or acknowledge the back office events (the attack of issue 17)', async () => {
    const account = await newAccount('all');
    const till = await tokenOf(account.accountId, 'pos');
    const setup = { token: account.token, accountId: account.accountId };
    const generator = await createGenerator(setup);
    const voided = await call(ctx.api, 'pos', 'POST', '/v2.0/voided_transactions', {
      token: till,
      body: { transaction: { site_id: 'S1', pos_transaction_id: 'T-17' } },
    });
    expect(voided.status).toBe(200);
    const event = (await eventsOf(account.accountId)).find((e) => e.type === 'transaction.voided')!;
    for (const [method, path, body] of [
      ['DELETE', `/v1.0/events/${event.id}`, undefined],
      ['POST', `/v1.0/codegen/${generator}/codes`, { count: 1000 }],
      ['PATCH', `/v1.0/codegen/${generator}`, { code_generator: { status: 'active' } }],
      ['POST', '/v1.0/codegen', { code_generator: winterPromotion }],
    ] as const) {
      expect((await call(ctx.api, 'core', method, path, { token: till, body })).status, `${method} ${path}`).toBe(403);
    }
    expect((await eventsOf(account.accountId)).map((e) => e.id)).toContain(event.id);
  });
});
