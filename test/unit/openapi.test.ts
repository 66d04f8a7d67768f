import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { openApiDocument } from '../../openapi/document.ts';

describe('the OpenAPI document', () => {
  const document = openApiDocument();

  it('is current in openapi/openapi.json (run `npm run openapi` after changing routes or schemas)', () => {
    expect(JSON.parse(readFileSync('openapi/openapi.json', 'utf8'))).toEqual(document);
  });

  it('describes every route of the route table, on its host', () => {
    for (const route of routes) {
      const pathItem = (document.paths as any)[route.path];
      expect(pathItem?.[route.method.toLowerCase()]?.operationId).toBe(route.operationId);
      expect(pathItem.servers[0].url).toBe(route.host === 'core' ? '{base_url}' : '{pos_base_url}');
    }
  });

  it('documents 401 and 500 and 503 for every operation, in the error shape of its host', () => {
    for (const route of routes) {
      const responses = (document.paths as any)[route.path][route.method.toLowerCase()].responses;
      for (const status of ['401', '500', '503']) {
        expect(responses[status].content['application/json'].schema.$ref).toBe(
          `#/components/schemas/${route.host === 'core' ? 'CoreError' : 'PosError'}`,
        );
      }
    }
  });
});

describe('checkAgainstOpenApi', async () => {
  const { checkAgainstOpenApi } = await import('../support/openapi.ts');
  const headers = (extra: Record<string, string> = {}) =>
    new Headers({
      'Content-Type': 'application/json; charset=utf-8',
      'X-Request-Id': 'r-1',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      'X-Runtime': '0.001000',
      ...extra,
    });
  const event = { event: { id: 1, type: 'transaction.voided', resource_id: 'S/1', created_at: '2026-11-21T00:00:00.000Z' } };

  it('accepts a response that matches', () => {
    expect(() => checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 200, headers: headers(), text: JSON.stringify(event) })).not.toThrow();
  });

  it('rejects an undocumented status, a missing header, and a body off its schema', () => {
    expect(() => checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 418, headers: headers(), text: '{}' })).toThrow(/not a documented status/);
    const noRequestId = headers();
    noRequestId.delete('X-Request-Id');
    expect(() => checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 200, headers: noRequestId, text: JSON.stringify(event) })).toThrow(/X-Request-Id/);
    expect(() =>
      checkAgainstOpenApi('core', 'GET', '/v1.0/events/1', { status: 200, headers: headers(), text: JSON.stringify({ event: { ...event.event, extra: 1 } }) }),
    ).toThrow(/additional properties/);
    expect(() => checkAgainstOpenApi('core', 'DELETE', '/v1.0/events/1', { status: 200, headers: headers(), text: '' })).toThrow(/single space|" "/);
    expect(() =>
      checkAgainstOpenApi('pos', 'POST', '/v2.0/voided_transactions', { status: 401, headers: headers(), text: '{"errors":[{"message":"x"}]}' }),
    ).toThrow(/body/);
  });
});
