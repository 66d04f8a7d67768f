import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes, type Route } from '../../functions/routes.ts';
import type { LocalApi } from '../../local/server.ts';
import { openApiChecker } from '../../openapi/check.ts';
import { runSmoke } from '../../scripts/smoke/run.ts';
import type { Outcome } from '../../scripts/smoke/smoke.ts';
import { newAccount } from '../support/accounts.ts';
import { startTestApi } from '../support/local-api.ts';

/**
 * The webhook checks of the smoke command, run before the webhook routes exist: the route table
 * gets their rows, and a stand-in core host answers them as PRODUCT.md "Webhooks" says (in
 * memory), forwarding every other request to the local API. It shows that the checks walk the
 * endpoint's whole life, find the run's deliveries and delete the endpoint. Once the real routes
 * are in the table, test/smoke/smoke.test.ts runs the same checks against them.
 */
const webhookRoutes: Route[] = [
  ['createWebhookEndpoint', 'POST', '/v1.0/webhook_endpoints'],
  ['listWebhookEndpoints', 'GET', '/v1.0/webhook_endpoints'],
  ['getWebhookEndpoint', 'GET', '/v1.0/webhook_endpoints/{id}'],
  ['updateWebhookEndpoint', 'PATCH', '/v1.0/webhook_endpoints/{id}'],
  ['deleteWebhookEndpoint', 'DELETE', '/v1.0/webhook_endpoints/{id}'],
  ['rotateWebhookSecret', 'POST', '/v1.0/webhook_endpoints/{id}/rotate_secret'],
  ['listWebhookDeliveries', 'GET', '/v1.0/webhook_endpoints/{id}/deliveries'],
  ['retryWebhookDelivery', 'POST', '/v1.0/webhook_endpoints/{id}/deliveries/{event_id}/retry'],
].map(([operationId, method, path]) => ({ operationId: operationId!, host: 'core', method: method as Route['method'], path: path!, entry: '', scope: 'core', tables: {}, summary: '' }));

/** What both runs share: the OpenAPI documents, short waits, every route with webhookRoutes for the webhook ones. */
function smokeSettings(outcomes: Outcome[]) {
  const documents = { core: JSON.parse(readFileSync('openapi/core.json', 'utf8')), pos: JSON.parse(readFileSync('openapi/pos.json', 'utf8')) };
  return {
    storeId: 999_999_999,
    timeoutMs: 10_000,
    settleMs: 2_000,
    checker: openApiChecker(documents),
    routes: [...routes.filter((route) => !route.operationId.includes('Webhook')), ...webhookRoutes],
    onOutcome: (outcome: Outcome) => outcomes.push(outcome),
  };
}

let api: LocalApi;
const servers: Server[] = [];
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/** The stand-in core host: webhook endpoints in memory, everything else forwarded. */
async function coreWithWebhooks(_receiverUrl: string) {
  const endpoints = new Map<number, Record<string, unknown>>();
  const deliveries = new Map<number, Map<number, Record<string, unknown>>>();
  const deleted: number[] = [];
  let nextId = 1;
  const send = (request: IncomingMessage, response: ServerResponse, status: number, body?: unknown, extra: Record<string, string> = {}) => {
    const text = body === undefined ? ' ' : JSON.stringify(body);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json; charset=utf-8',
      'X-Request-Id': String(request.headers['x-request-id']),
      'Cache-Control': request.method === 'GET' && status === 200 ? 'max-age=0, private, must-revalidate' : 'no-store',
      'X-Runtime': '0.001000',
      'X-Content-Type-Options': 'nosniff',
      ...extra,
    };
    if (status < 300 && body !== undefined) headers.ETag = `W/"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"`;
    response.writeHead(status, headers).end(text);
  };
  const shown = (endpoint: Record<string, unknown>) => Object.fromEntries(Object.entries(endpoint).filter(([key]) => key !== 'secret'));
  const url = await listen(async (request, response) => {
    const body = await bodyOf(request);
    const path = request.url!.split('?')[0]!;
    const [, , , id, sub, eventId] = path.split('/');
    if (!path.startsWith('/v1.0/webhook_endpoints')) {
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'connection')) as Record<string, string>;
      const upstream = await fetch(`${api.urls.core}${request.url}`, { method: request.method, headers, body: body || undefined });
      const text = await upstream.text();
      // Each event the feed shows is "delivered" to every endpoint, as the sender would.
      if (path === '/v1.0/events' && upstream.status === 200) {
        for (const event of JSON.parse(text).events) {
          for (const [endpointId, endpoint] of endpoints) {
            await fetch(String(endpoint.url), { method: 'POST', body: JSON.stringify({ type: event.type, data: event }), headers: { 'webhook-id': String(event.id) } });
            deliveries.get(endpointId)!.set(event.id, { event_id: event.id, event_type: event.type, status: 'succeeded', attempts: 1, last_attempt_at: event.created_at, last_response_status: 204, next_attempt_at: null });
          }
        }
      }
      const answer = new Headers(upstream.headers);
      answer.delete('content-length');
      response.writeHead(upstream.status, Object.fromEntries(answer)).end(text);
      return;
    }
    const endpoint = id ? endpoints.get(Number(id)) : undefined;
    if (id && !endpoint) return send(request, response, 404, { errors: [{ message: `Webhook endpoint ${id} not found` }] });
    const now = new Date().toISOString();
    if (!id && request.method === 'POST') {
      const given = JSON.parse(body).webhook_endpoint;
      const created = { id: nextId++, url: given.url, event_types: ['*'], description: given.description ?? '', status: 'enabled', secret: `whsec_${randomBytes(24).toString('base64')}`, created_at: now, updated_at: now };
      endpoints.set(created.id, created);
      deliveries.set(created.id, new Map());
      return send(request, response, 201, { webhook_endpoint: created }, { Location: `/v1.0/webhook_endpoints/${created.id}` });
    }
    if (!id) return send(request, response, 200, { webhook_endpoints: [...endpoints.values()].map(shown), next_cursor: null });
    if (!sub && request.method === 'GET') return send(request, response, 200, { webhook_endpoint: shown(endpoint!) });
    if (!sub && request.method === 'PATCH') {
      Object.assign(endpoint!, JSON.parse(body).webhook_endpoint, { updated_at: now });
      return send(request, response, 200, { webhook_endpoint: shown(endpoint!) });
    }
    if (!sub && request.method === 'DELETE') {
      endpoints.delete(Number(id));
      deleted.push(Number(id));
      return send(request, response, 200);
    }
    if (sub === 'rotate_secret') {
      endpoint!.secret = `whsec_${randomBytes(24).toString('base64')}`;
      return send(request, response, 200, { webhook_endpoint: endpoint });
    }
    const list = deliveries.get(Number(id))!;
    if (sub === 'deliveries' && !eventId) return send(request, response, 200, { deliveries: [...list.values()], next_cursor: null });
    const delivery = list.get(Number(eventId));
    if (!delivery) return send(request, response, 404, { errors: [{ message: 'No such delivery' }] });
    return send(request, response, 202, { delivery: { ...delivery, status: 'pending' } });
  });
  return { url, endpoints, deleted };
}

describe('the smoke webhook checks', () => {
  it('create, list, read, update and rotate an endpoint, see a delivery of the run, retry it and delete the endpoint', async () => {
    const account = await newAccount();
    const received: string[] = [];
    const receiver = await listen(async (request, response) => {
      received.push(String(request.headers['webhook-id']));
      await bodyOf(request);
      response.writeHead(204).end();
    });
    const core = await coreWithWebhooks(receiver);
    const outcomes: Outcome[] = [];

    const report = await runSmoke({
      urls: { core: core.url, pos: api.urls.pos },
      token: account.token,
      webhookUrl: receiver,
      ...smokeSettings(outcomes),
    });

    const lines = outcomes.map((outcome) => `${outcome.result} ${outcome.status ?? ''} ${outcome.name}${outcome.note ? ` (${outcome.note})` : ''} ${outcome.problems.join('; ')}`.trim());
    expect(report.passed, lines.join('\n')).toBe(true);
    expect(lines.filter((line) => /Webhook/.test(line))).toEqual([
      'ok 201 createWebhookEndpoint',
      'ok 200 listWebhookEndpoints',
      'ok 200 getWebhookEndpoint',
      'ok 200 updateWebhookEndpoint (If-Match)',
      'ok 200 rotateWebhookSecret',
      'ok 200 listWebhookDeliveries',
      'ok 202 retryWebhookDelivery',
      'ok 200 deleteWebhookEndpoint',
      'ok 404 getWebhookEndpoint (deleted)',
    ]);
    expect(core.endpoints.size).toBe(0);
    expect(core.deleted).toHaveLength(1);
    expect(received.length).toBeGreaterThan(0);
  }, 60_000);

  it('without --webhook-url, say in one line that the webhook routes are not checked', async () => {
    const account = await newAccount();
    const outcomes: Outcome[] = [];

    const report = await runSmoke({
      urls: api.urls,
      token: account.token,
      ...smokeSettings(outcomes),
    });

    expect(report.passed).toBe(true);
    expect(outcomes.filter((outcome) => outcome.name.includes('ebhook'))).toEqual([
      {
        name: 'webhooks',
        result: 'skip',
        problems: [],
        reason: "8 webhook routes not checked: no --webhook-url given (a URL that answers POST with a 2xx; the run's events are delivered there)",
      },
    ]);
  }, 60_000);
});
