import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostId } from '../../../functions/routes.ts';
import { HEADER_LIMITS } from '../../../infra/gateway-errors.ts';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { startTestApi } from '../../support/local-api.ts';
import { UUID } from '../../support/http.ts';

/**
 * Headers the stage's WAF cannot inspect whole (more than 200, or more than 8 KB of names and
 * values) are refused there with 400 in the host's error body, so that a token hidden past them
 * is never passed uncounted (docs/security.md). The local server refuses them the same way, before
 * any route, token or body is looked at. Before this, it handed 210 padding headers to the
 * functions, which answered 200: that is what these tests would catch.
 */
let api: LocalApi;
let token: string;
beforeAll(async () => {
  api = await startTestApi();
  token = (await newAccount()).token;
});
afterAll(() => api.close());

/** One request written byte for byte on a socket (no header added by a client library), and its answer. */
function rawCall(host: HostId, method: string, path: string, headers: readonly (readonly [string, string])[]) {
  const { hostname, port } = new URL(api.urls[host]);
  return new Promise<{ status: number; headers: Record<string, string>; body: any }>((done, fail) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', fail);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = head!.split('\r\n');
      const received = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      done({ status: Number(statusLine!.split(' ')[1]), headers: received, body: JSON.parse(rest.join('\r\n')) });
    });
    socket.write(`${method} ${path} HTTP/1.1\r\n${[['Host', hostname], ['Connection', 'close'], ...headers].map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`);
  });
}

const padded = (count: number) => Array.from({ length: count }, (_, i) => [`X-Pad-${i}`, 'x'] as const);
const message = `Request headers are too large: send at most ${HEADER_LIMITS.count} headers and ${HEADER_LIMITS.bytes} bytes of headers`;

describe('headers WAF could not inspect whole, on the local server', () => {
  it('a token after 210 padding headers: 400 in the core shape, no function run', async () => {
    const answer = await rawCall('core', 'GET', '/v1.0/events', [...padded(210), ['X-Auth-Token', token]]);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ errors: [{ message }] });
    expect(answer.headers['x-request-id']).toMatch(UUID);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-store');
  });

  it('a token after 8 KB of one header, on the pos host: 400 with the cashier text', async () => {
    const answer = await rawCall('pos', 'POST', '/v2.0/transactions/void', [
      ['X-Pad', 'x'.repeat(HEADER_LIMITS.bytes)],
      ['X-Auth-Token', token],
    ]);
    expect(answer.status).toBe(400);
    expect(answer.body.transaction.errors).toEqual([{ message }]);
    expect(answer.body.transaction.display_messages[0]).toMatchObject({ message_id: 'headers_too_large', priority: 1 });
  });

  it("headers past Node's own 16 KiB limit get the same answer, not a bare 431", async () => {
    const answer = await rawCall('core', 'GET', '/v1.0/events', [
      ['X-Pad', 'x'.repeat(20_000)],
      ['X-Auth-Token', token],
    ]);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ errors: [{ message }] });
  });

  it('200 headers in all, and 8,192 bytes of names and values, are served as usual', async () => {
    // Host, Connection and the token are 3 of the 200.
    expect((await rawCall('core', 'GET', '/v1.0/events', [...padded(197), ['X-Auth-Token', token]])).status).toBe(200);
    const hostname = new URL(api.urls.core).hostname;
    const used = 'Host'.length + hostname.length + 'Connection'.length + 'close'.length + 'X-Auth-Token'.length + token.length + 'X-Pad'.length;
    const fits = await rawCall('core', 'GET', '/v1.0/events', [
      ['X-Pad', 'x'.repeat(HEADER_LIMITS.bytes - used)],
      ['X-Auth-Token', token],
    ]);
    expect(fits.status).toBe(200);
    const over = await rawCall('core', 'GET', '/v1.0/events', [
      ['X-Pad', 'x'.repeat(HEADER_LIMITS.bytes - used + 1)],
      ['X-Auth-Token', token],
    ]);
    expect(over.status).toBe(400);
  });
});
