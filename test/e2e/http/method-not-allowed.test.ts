import { describe, expect, it } from 'vitest';
import { hosts, type HostId } from '../../../functions/routes.ts';
import { methodsByPath } from '../../../infra/gateway-errors.ts';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';

/**
 * 405 with Allow, walking the route table: every known path of each host, under every method it
 * does not serve, answers 405 in the host's error shape with an Allow header listing the methods
 * it serves, as API Gateway's mock methods do in AWS (test/infra/stack.test.ts); no function runs.
 */
const ctx = useLocalApi();

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const concrete = (path: string) => path.replace(/\{([^}]+)\}/g, (_, name: string) => ({ id: '7', event_id: '8', code: 'WIN-7KQ2M9XA' })[name] ?? 'x7');

const cases = (Object.keys(hosts) as HostId[]).flatMap((host) =>
  [...methodsByPath(host)].flatMap(([path, allow]) =>
    METHODS.filter((method) => !allow.includes(method)).map((method) => [host, method, path, allow] as const),
  ),
);

describe('a known path with a method it does not serve', () => {
  it('covers every path of the route table', () => {
    expect(new Set(cases.map(([host, , path]) => `${host} ${path}`)).size).toBe(
      (Object.keys(hosts) as HostId[]).reduce((sum, host) => sum + methodsByPath(host).size, 0),
    );
  });

  it.each(cases)('%s %s %s answers 405 with Allow: %s', async (host, method, path, allow) => {
    const response = await call(ctx.api, host, method, concrete(path), {
      token: ctx.account.token,
      // HEAD has no body to check; the others are checked against the host's error shape.
      checkOpenApi: method !== 'HEAD',
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow.join(', '));
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('etag')).toBeNull();
    if (method === 'HEAD') return;
    const message = `Method ${method} is not allowed on this path; it serves ${allow.join(', ')} (see the Allow header)`;
    if (host === 'core') expect(response.json).toEqual({ errors: [{ message }] });
    else {
      expect(response.json.transaction.errors).toEqual([{ message }]);
      expect(response.json.transaction.display_messages[0]).toMatchObject({ message, message_id: 'method_not_allowed' });
    }
  });

  it('without a token as well: the gateway answers before any function', async () => {
    const response = await call(ctx.api, 'core', 'PUT', '/v1.0/events/1');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('DELETE, GET');
  });

  it.each([
    ['core', 'PUT', '/v1.0/events/1/extra'],
    ['core', 'GET', '/v1.0'],
    ['pos', 'DELETE', '/v2.0/voided_transactions/1'],
    ['pos', 'GET', '/v1.0/events/1'],
  ] as const)('an unknown path stays 404 (%s %s %s)', async (host, method, path) => {
    const response = await call(ctx.api, host, method, path, { token: ctx.account.token });
    expect(response.status).toBe(404);
    expect(response.headers.get('allow')).toBeNull();
  });
});
