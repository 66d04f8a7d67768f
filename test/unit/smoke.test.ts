import { describe, expect, it } from 'vitest';
import { routes, type Route } from '../../functions/routes.ts';
import { checks, routesWithoutCheck } from '../../scripts/smoke/checks.ts';
import { formatOutcome } from '../../scripts/smoke/run.ts';

/** `npm run smoke` checks every route of the route table: a route added without a smoke check fails here. */
describe('the smoke checks', () => {
  it('cover every route of the route table (add a check to scripts/smoke/checks.ts for a new route)', () => {
    expect(routesWithoutCheck(routes).map((route) => route.operationId)).toEqual([]);
  });

  it('name a route that has no check, so the command refuses to run', () => {
    const added: Route = { ...routes[0]!, operationId: 'archiveCodeGenerator', method: 'POST', path: '/v1.0/codegen/{id}/archive' };
    expect(routesWithoutCheck([...routes, added])).toEqual([added]);
  });

  it('already check the operations of the redemption and webhook routes, which run once those are in the route table', () => {
    const announced = ['redeemCodes', 'validateCodes', 'listCodes', 'createWebhookEndpoint', 'listWebhookEndpoints', 'getWebhookEndpoint',
      'updateWebhookEndpoint', 'deleteWebhookEndpoint', 'rotateWebhookSecret', 'listWebhookDeliveries', 'retryWebhookDelivery'];
    expect(announced.filter((operationId) => !(operationId in checks))).toEqual([]);
    expect(Object.entries(checks).filter(([, check]) => check.webhook).map(([operationId]) => operationId).sort()).toEqual(
      announced.filter((operationId) => /Webhook/.test(operationId)).sort(),
    );
  });
});

describe('a line of the smoke report', () => {
  it('shows result, status, operation, request and latency, then what is wrong', () => {
    expect(formatOutcome({ name: 'createCodeGenerator', result: 'ok', method: 'POST', path: '/v1.0/codegen', status: 201, latencyMs: 38.4, problems: [] })).toBe(
      `ok   201  createCodeGenerator    ${'POST /v1.0/codegen'.padEnd(56)}   38 ms`,
    );
    expect(
      formatOutcome({ name: 'getEvent', result: 'fail', method: 'GET', path: '/v1.0/events/7', note: 'If-None-Match', status: 200, latencyMs: 5, problems: ['expected 304, got 200', 'no ETag header'] }),
    ).toBe(`FAIL 200  getEvent               ${'GET /v1.0/events/7 (If-None-Match)'.padEnd(56)}    5 ms  expected 304, got 200; no ETag header`);
    expect(formatOutcome({ name: 'webhooks', result: 'skip', problems: [], reason: 'not checked' })).toBe('skip      webhooks               not checked');
  });
});
