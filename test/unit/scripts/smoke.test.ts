import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { routes, type Route } from '../../../functions/routes.ts';
import { checks, checksOf, routesWithoutCheck } from '../../../scripts/smoke/checks.ts';
import { formatOutcome } from '../../../scripts/smoke/run.ts';
import { SmokeRun, type Outcome } from '../../../scripts/smoke/smoke.ts';

/** `npm run smoke` checks every route of the route table: a route without a written check gets its token check. */
describe('the smoke checks', () => {
  it('cover every route of the route table', () => {
    const checked = new Set(checksOf(routes).map(([operationId]) => operationId));
    expect(routes.filter((route) => !checked.has(route.operationId)).map((route) => route.operationId)).toEqual([]);
  });

  it('name a route that has no written check, and check it without a token (401) after the written ones', () => {
    const added: Route = { ...routes[0]!, operationId: 'archiveCodeGenerator', method: 'POST', path: '/v1.0/codegen/{id}/archive' };
    expect(routesWithoutCheck([...routes, added])).toEqual([...routesWithoutCheck(routes), added]);
    expect(
      checksOf([...routes, added])
        .map(([operationId]) => operationId)
        .at(-1),
    ).toBe('archiveCodeGenerator');
  });

  it('already check the operations of the redemption and webhook routes, which run once those are in the route table', () => {
    const announced = [
      'redeemCodes',
      'validateCodes',
      'listCodes',
      'createWebhookEndpoint',
      'listWebhookEndpoints',
      'getWebhookEndpoint',
      'updateWebhookEndpoint',
      'deleteWebhookEndpoint',
      'rotateWebhookSecret',
      'listWebhookDeliveries',
      'retryWebhookDelivery',
    ];
    expect(announced.filter((operationId) => !(operationId in checks))).toEqual([]);
    expect(
      Object.entries(checks)
        .filter(([, check]) => check.webhook)
        .map(([operationId]) => operationId)
        .sort(),
    ).toEqual(announced.filter((operationId) => /Webhook/.test(operationId)).sort());
  });
});

describe('a line of the smoke report', () => {
  it('shows result, status, operation, request and latency, then what is wrong', () => {
    expect(
      formatOutcome({ name: 'createCodeGenerator', result: 'ok', method: 'POST', path: '/v1.0/codegen', status: 201, latencyMs: 38.4, problems: [] }),
    ).toBe(`ok   201  createCodeGenerator    ${'POST /v1.0/codegen'.padEnd(56)}   38 ms`);
    expect(
      formatOutcome({
        name: 'getEvent',
        result: 'fail',
        method: 'GET',
        path: '/v1.0/events/7',
        note: 'If-None-Match',
        status: 200,
        latencyMs: 5,
        problems: ['expected 304, got 200', 'no ETag header'],
      }),
    ).toBe(`FAIL 200  getEvent               ${'GET /v1.0/events/7 (If-None-Match)'.padEnd(56)}    5 ms  expected 304, got 200; no ETag header`);
    expect(formatOutcome({ name: 'webhooks', result: 'skip', problems: [], reason: 'not checked' })).toBe('skip      webhooks               not checked');
  });
});

describe('a list that lags its write (an index in AWS)', () => {
  it('is asked again until the item is there, and reported once, with the number of tries', async () => {
    let requests = 0;
    const server = createServer((request, response) => {
      requests++;
      const body = JSON.stringify({ code_generators: requests >= 3 ? [{ id: 7 }] : [], next_cursor: null });
      response.writeHead(200, {
        'Content-Type': 'application/json; charset=utf-8',
        'X-Request-Id': String(request.headers['x-request-id']),
        'Cache-Control': 'max-age=0, private, must-revalidate',
        'X-Runtime': '0.000100',
        ETag: 'W/"0123456789abcdef0123456789abcdef"',
      });
      response.end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const outcomes: Outcome[] = [];
    const run = new SmokeRun({
      urls: { core: url, pos: url },
      token: 'tg_test',
      storeId: 1,
      timeoutMs: 5_000,
      settleMs: 5_000,
      // No document: only the contract's own header rules and the item apply.
      checker: { operation: () => undefined, problems: () => [], errorShapeProblems: () => [] },
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    try {
      const found = await run.findListed(
        'listCodeGenerators',
        (api, cursor) => api.core.GET('/v1.0/codegen', { params: { query: cursor ? { cursor } : {} } }),
        {
          expect: 200,
          items: 'code_generators',
          match: (item: { id: number }) => item.id === 7,
          missing: 'generator 7 is not listed',
        },
      );

      expect(found).toEqual({ id: 7 });
      expect(requests).toBe(3);
      expect(outcomes).toEqual([expect.objectContaining({ name: 'listCodeGenerators', result: 'ok', status: 200, note: '3 tries', problems: [] })]);
    } finally {
      server.close();
    }
  });
});
