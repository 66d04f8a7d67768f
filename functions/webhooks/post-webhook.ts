import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { addressProblem, LOCAL_WEBHOOKS } from './rules.ts';
import { ATTEMPT_TIMEOUT_MS } from './lanes.ts';

/**
 * One POST to a receiver. The connect-time check is request-filtering-agent's: the address a
 * name resolves to is checked inside the lookup, before any connection is made, and refused
 * unless it is an ordinary unicast address (whatever DNS says: a name registered as
 * `hooks.example.com` that resolves to 10.0.0.1 or 169.254.169.254 gets no packet). The local
 * stack allows loopback only. Redirects are never followed (node:http does not), and only the
 * status code and the duration of the answer are kept: the body is read and thrown away.
 *
 * No bound on the sockets to one origin: what one account may have in flight to an origin is its
 * lanes (lanes.ts), and in AWS an execution environment sends one attempt at a time. A bound
 * here (there was one of 8) would make the accounts that share an origin share it too on the
 * local stack, where every sender runs in one process.
 */

const agentOptions = {
  keepAlive: true,
  allowPrivateIPAddress: false,
  allowMetaIPAddress: false,
  allowIPAddressList: LOCAL_WEBHOOKS ? ['127.0.0.0/8', '::1'] : [],
};
const agents = { 'http:': new RequestFilteringHttpAgent(agentOptions), 'https:': new RequestFilteringHttpsAgent(agentOptions) };

/**
 * The resolver a connection uses, refusing (before any connection) a name with an address the
 * registration rules refuse (rules.ts addressProblem): request-filtering-agent's own check sees
 * an IPv6 address that embeds a forbidden IPv4 one (`::7f00:1`, `64:ff9b::a9fe:a9fe`, 6to4,
 * Teredo) as ordinary unicast; this one judges what it embeds. Both run.
 */
function checkedLookup(lookup: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return ((hostname: string, options: object, callback: (error: Error | null, address?: unknown, family?: number) => void) => {
    lookup(
      hostname,
      options as never,
      ((error: NodeJS.ErrnoException | null, address: unknown, family?: number) => {
        if (error) return callback(error);
        const addresses = Array.isArray(address) ? (address as { address: string }[]).map((entry) => entry.address) : [address as string];
        for (const one of addresses) {
          const problem = addressProblem(one, LOCAL_WEBHOOKS);
          if (problem) return callback(Object.assign(new Error(`DNS lookup ${one} (host: ${hostname}) is not allowed: ${problem}`), { code: 'EBLOCKED' }));
        }
        callback(null, address, family);
      }) as never,
    );
  }) as LookupFunction;
}

export interface AttemptResult {
  /** The receiver's status code, when it answered in time. */
  readonly status?: number;
  readonly retryAfter?: string;
  /** Why no status: `timeout`, `blocked_address`, or the socket error's code (ECONNREFUSED …). */
  readonly error?: string;
  readonly durationMs: number;
}

export function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs?: number; lookup?: LookupFunction } = {},
): Promise<AttemptResult> {
  const target = new URL(url);
  const agent = agents[target.protocol as keyof typeof agents];
  const started = performance.now();
  if (!agent) return Promise.resolve({ error: 'unsupported_scheme', durationMs: 0 });
  // An IP literal is not looked up: judged here, with no connection made.
  const literal = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) !== 0 && addressProblem(literal, LOCAL_WEBHOOKS)) return Promise.resolve({ error: 'blocked_address', durationMs: 0 });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...result, durationMs: Math.round((performance.now() - started) * 100) / 100 });
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(
      target,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: checkedLookup(options.lookup),
      },
      (response) => {
        const retryAfter = response.headers['retry-after'];
        finish({ status: response.statusCode, ...(retryAfter ? { retryAfter } : {}) });
        response.on('end', () => clearTimeout(timer));
        response.resume(); // the body is not kept
      },
    );
    // One deadline for connecting, sending and the status line; a body still streaming then is cut.
    const timer = setTimeout(() => {
      finish({ error: 'timeout' });
      outgoing.destroy();
    }, options.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      finish({ error: /is not allowed/.test(error.message) ? 'blocked_address' : (error.code ?? 'request_failed') });
    });
    outgoing.on('close', () => {
      if (!settled) finish({ error: 'connection_closed' });
    });
    outgoing.end(body);
  });
}
