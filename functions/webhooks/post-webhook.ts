import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { numberFromEnv } from '#runtime/config';
import { LOCAL_WEBHOOKS } from './rules.ts';

/**
 * One POST to a receiver. The connect-time check is request-filtering-agent's: the address a
 * name resolves to is checked inside the lookup, before any connection is made, and refused
 * unless it is an ordinary unicast address (whatever DNS says: a name registered as
 * `hooks.example.com` that resolves to 10.0.0.1 or 169.254.169.254 gets no packet). The local
 * stack allows loopback only. Redirects are never followed (node:http does not), and only the
 * status code and the duration of the answer are kept: the body is read and thrown away.
 *
 * `maxSockets` bounds the connections to one origin from one process, so that a receiver that
 * hangs holds at most that many; every request has its own deadline, queued ones included.
 */
export const ATTEMPT_TIMEOUT_MS = numberFromEnv('WEBHOOK_TIMEOUT_MS', 15_000);

const agentOptions = {
  keepAlive: true,
  maxSockets: 8,
  allowPrivateIPAddress: false,
  allowMetaIPAddress: false,
  allowIPAddressList: LOCAL_WEBHOOKS ? ['127.0.0.0/8', '::1'] : [],
};
const agents = { 'http:': new RequestFilteringHttpAgent(agentOptions), 'https:': new RequestFilteringHttpsAgent(agentOptions) };

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
        ...(options.lookup ? { lookup: options.lookup } : {}),
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
