import '../../support/webhooks/env-aws.ts';
import tls from 'node:tls';
import { getDefaultAutoSelectFamily, Socket, type LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { webhookUrlProblem } from '../../../functions/webhooks/rules.ts';
import { postWebhook } from '../../../functions/webhooks/post-webhook.ts';

/**
 * Server-side request forgery: a webhook URL is a request the service makes on an integrator's
 * behalf. With the rules as they hold in AWS (test/support/webhooks/env-aws.ts): every forbidden range, in
 * every spelling the WHATWG URL parser accepts, is refused at registration; a name that
 * resolves to a forbidden address is refused when connecting, before any connection is made.
 * No request of this file leaves 127.0.0.1: registration resolves nothing, and the connect-time
 * checks run against a stubbed DNS answer with TLS's connect replaced, so no socket connects.
 */
const ctx = useLocalApi();

const FORBIDDEN: [string, string][] = [
  ['http://hooks.example.com/', 'https:// only'],
  ['https://127.0.0.1/', 'loopback'],
  ['https://2130706433/', 'loopback, decimal'],
  ['https://0x7f000001/', 'loopback, hex'],
  ['https://017700000001/', 'loopback, octal'],
  ['https://127.1/', 'loopback, short form'],
  ['https://0/', 'unspecified, one number'],
  ['https://0.0.0.0/', 'unspecified'],
  ['https://10.0.0.1/', 'private'],
  ['https://167772161/', 'private, decimal'],
  ['https://0x0a000001/', 'private, hex'],
  ['https://012.0.0.1/', 'private, octal first part'],
  ['https://0xa.0.0.1/', 'private, hex first part'],
  ['https://10.1/', 'private, short form'],
  ['https://172.16.0.1/', 'private'],
  ['https://192.168.1.1/', 'private'],
  ['https://169.254.169.254/', 'link-local: the instance metadata service'],
  ['https://100.64.0.1/', 'carrier-grade NAT'],
  ['https://224.0.0.1/', 'multicast'],
  ['https://255.255.255.255/', 'broadcast'],
  ['https://[::1]/', 'IPv6 loopback'],
  ['https://[::]/', 'IPv6 unspecified'],
  ['https://[0:0:0:0:0:0:0:1]/', 'IPv6 loopback, long form'],
  ['https://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
  ['https://[::ffff:10.0.0.1]/', 'IPv4-mapped private'],
  ['https://[::ffff:a9fe:a9fe]/', 'IPv4-mapped metadata, hex'],
  ['https://[fe80::1]/', 'IPv6 link-local'],
  ['https://[fc00::1]/', 'unique-local'],
  ['https://[fd12:3456::1]/', 'unique-local'],
  ['https://[ff02::1]/', 'IPv6 multicast'],
  ['https://[::127.0.0.1]/', 'IPv4-compatible loopback (WHATWG writes it ::7f00:1)'],
  ['https://[::a9fe:a9fe]/', 'IPv4-compatible metadata, hex'],
  ['https://[::ffff:0:a00:1]/', 'IPv4-translated (RFC 6145) private'],
  ['https://[64:ff9b::a9fe:a9fe]/', 'NAT64 of the metadata address'],
  ['https://[2002:a9fe:a9fe::]/', '6to4 of the metadata address'],
  ['https://[2001:0:5db8:d822:8000:63bf:f5ff:fefe]/', 'Teredo whose client is private (10.0.1.1, inverted in the last 32 bits)'],
  ['https://[2001:0:a00:1:8000:63bf:a246:d7cb]/', 'Teredo whose server is private (10.0.0.1)'],
  ['https://192.0.0.8/', 'IETF protocol assignments (192.0.0.0/24)'],
  ['https://198.18.0.1/', 'benchmarking (198.18.0.0/15)'],
  ['https://240.0.0.1/', 'reserved (240.0.0.0/4)'],
  ['https://hooks.example.com:22/', 'port 22'],
  ['https://hooks.example.com:0/', 'port 0'],
  ['https://hooks.example.com:80/', 'port 80 of https'],
  ['https://localhost/', 'localhost'],
  ['https://api.localhost/', 'a name under localhost'],
  ['https://localhost./', 'localhost with the root dot'],
  ['https://api.localhost./', 'a name under localhost with the root dot'],
  ['https://user@hooks.example.com/', 'user info'],
  ['https://user:pw@hooks.example.com/', 'user and password'],
  ['https://hooks.example.com@127.0.0.1/', 'user info that looks like the host'],
  ['https://hooks.example.com:443@10.0.0.1/', 'user info that looks like a host and port'],
  ['https://10.0.0.1\\@hooks.example.com/', 'a backslash: WHATWG reads the host as 10.0.0.1'],
  ['https://%31%30.0.0.1/', 'percent-encoded private'],
  ['https://１０.０.０.１/', 'full-width digits of a private address'],
];

const ALLOWED = [
  'https://hooks.example.com/tillgate?token=abc',
  'https://93.184.216.34/',
  'https://[2606:4700::1111]/x',
  'https://no-such-name.invalid/',
  'https://hooks.example.com:8443/x',
  'https://hooks.example.com:1024/',
  'https://hooks.example.com:65535/',
  // 6to4 and Teredo are judged by the IPv4 addresses inside: public ones pass (93.184.216.34).
  'https://[2002:5db8:d822::1]/',
  'https://[2001:0:5db8:d822:8000:63bf:a247:27cb]/',
];

describe('webhook URLs at registration', () => {
  it.each(FORBIDDEN)('refuses %s (%s) with 422 naming webhook_endpoint.url, and registers nothing', async (url) => {
    const response = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', { token: ctx.account.token, body: { webhook_endpoint: { url } } });
    expect(response.status, response.text).toBe(422);
    expect(response.json.errors).toEqual([{ message: expect.stringMatching(/^webhook_endpoint\.url must/), field: 'webhook_endpoint.url' }]);
    const list = await call(ctx.api, 'core', 'GET', '/v1.0/webhook_endpoints', { token: ctx.account.token });
    expect(list.json.webhook_endpoints).toEqual([]);
  });

  it('refuses the same URLs when a PATCH sets them', async () => {
    const created = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', {
      token: ctx.account.token,
      body: { webhook_endpoint: { url: ALLOWED[0] } },
    });
    expect(created.status).toBe(201);
    for (const [url] of FORBIDDEN) {
      const response = await call(ctx.api, 'core', 'PATCH', `/v1.0/webhook_endpoints/${created.json.webhook_endpoint.id}`, {
        token: ctx.account.token,
        body: { webhook_endpoint: { url } },
      });
      expect(response.status, url).toBe(422);
    }
  });

  it.each(ALLOWED.map((url) => [url]))('accepts %s (a name is not resolved at registration)', async (url) => {
    const response = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', { token: ctx.account.token, body: { webhook_endpoint: { url } } });
    expect(response.status, response.text).toBe(201);
    expect(response.json.webhook_endpoint.url).toBe(url);
  });

  it('names the range in the message', () => {
    expect(webhookUrlProblem('https://0x0a000001/', false)).toBe('must not point at a private address (10.0.0.1)');
    expect(webhookUrlProblem('https://[::ffff:a9fe:a9fe]/', false)).toBe('must not point at a link-local address (169.254.169.254)');
    expect(webhookUrlProblem('https://[::]/', false)).toBe('must not point at an unspecified address (::)');
    expect(webhookUrlProblem('https://[::127.0.0.1]/', false)).toBe('must not point at a loopback address (127.0.0.1), embedded in ::7f00:1');
    expect(webhookUrlProblem('https://[64:ff9b::a9fe:a9fe]/', false)).toBe(
      'must not point at a link-local address (169.254.169.254), embedded in 64:ff9b::a9fe:a9fe',
    );
    expect(webhookUrlProblem('https://hooks.example.com:22/', false)).toBe('must use port 443 or a port from 1024 to 65535');
  });

  it('accepts http:// and loopback only where the local stack allows them', () => {
    expect(webhookUrlProblem('http://127.0.0.1:8080/hook', true)).toBeUndefined();
    expect(webhookUrlProblem('http://[::1]:8080/hook', true)).toBeUndefined();
    expect(webhookUrlProblem('http://localhost:8080/hook', true)).toBeUndefined();
    expect(webhookUrlProblem('http://10.0.0.1/hook', true)).toBe('must not point at a private address (10.0.0.1)');
    expect(webhookUrlProblem('http://127.0.0.1:8080/hook', false)).toBe('must be an https:// URL');
    // Locally a receiver listens where it can (the port rule is AWS's).
    expect(webhookUrlProblem('http://127.0.0.1:80/hook', true)).toBeUndefined();
  });
});

describe('the address a name resolves to, checked when connecting (no packet leaves: DNS stubbed, TLS connect replaced)', () => {
  const original = tls.connect;
  afterEach(() => {
    (tls as { connect: typeof tls.connect }).connect = original;
  });

  /** TLS's connect replaced by one that only runs the connection's lookup and never connects. */
  function interceptConnect() {
    const outcomes: string[] = [];
    (tls as { connect: unknown }).connect = (options: { host: string; lookup: LookupFunction }) => {
      const socket = new Socket();
      for (const all of [false, true]) {
        options.lookup(
          options.host,
          { all, family: 0 } as never,
          ((error: Error | null, address: unknown) => {
            outcomes.push(error ? 'refused' : `would connect to ${JSON.stringify(address)}`);
            if (!all) socket.destroy(error ?? Object.assign(new Error('connect intercepted'), { code: 'INTERCEPTED' }));
          }) as never,
        );
      }
      return socket;
    };
    return outcomes;
  }

  const resolvingTo = (addresses: string[]): LookupFunction =>
    ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      if (options.all) callback(null, entries);
      else callback(null, entries[0]!.address, entries[0]!.family);
    }) as never;

  it.each([
    ['10.0.0.1'],
    ['172.31.255.255'],
    ['192.168.0.10'],
    ['169.254.169.254'],
    ['127.0.0.1'],
    ['0.0.0.0'],
    ['::1'],
    ['::ffff:10.0.0.1'],
    ['fd00:ec2::254'],
    ['fe80::1'],
    ['::7f00:1'],
    ['::a9fe:a9fe'],
    ['64:ff9b::a9fe:a9fe'],
    ['2002:a00:1::1'],
    ['2001:0:5db8:d822:8000:63bf:f5ff:fefe'],
  ])('refuses hooks.example.com resolving to %s before connecting', async (address) => {
    const outcomes = interceptConnect();
    const result = await postWebhook('https://hooks.example.com/hook', {}, '{}', { lookup: resolvingTo([address]), timeoutMs: 2000 });
    expect(result.error).toBe('blocked_address');
    expect(result.status).toBeUndefined();
    expect(outcomes).toEqual(['refused', 'refused']);
  });

  it.each([['https://[::127.0.0.1]/hook'], ['https://[64:ff9b::a9fe:a9fe]/hook'], ['https://[2002:a9fe:a9fe::]/hook']])(
    'refuses %s, an IP literal embedding a forbidden IPv4 address, without a lookup or a connection',
    async (url) => {
      const outcomes = interceptConnect();
      const result = await postWebhook(url, {}, '{}', { timeoutMs: 2000 });
      expect(result.error).toBe('blocked_address');
      expect(outcomes).toEqual([]);
    },
  );

  it('refuses a name with one public and one private address as a whole when all addresses are asked for, as Node 24 asks', async () => {
    // Happy eyeballs (autoSelectFamily, on by default) resolves every address and may try any.
    expect(getDefaultAutoSelectFamily()).toBe(true);
    const outcomes = interceptConnect();
    await postWebhook('https://hooks.example.com/hook', {}, '{}', { lookup: resolvingTo(['93.184.216.34', '10.0.0.1']), timeoutMs: 2000 });
    expect(outcomes).toEqual(['would connect to "93.184.216.34"', 'refused']);
  });

  it('lets a public address through to the connection (the control: the check is not refusing everything)', async () => {
    const outcomes = interceptConnect();
    const result = await postWebhook('https://hooks.example.com/hook', {}, '{}', { lookup: resolvingTo(['93.184.216.34']), timeoutMs: 2000 });
    expect(result.error).toBe('INTERCEPTED');
    expect(outcomes[0]).toBe('would connect to "93.184.216.34"');
  });
});
