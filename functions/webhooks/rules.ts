import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Webhook } from 'standardwebhooks';
import type { DeliveredEvent } from '#data/webhook-deliveries';

/**
 * The webhook rules every part shares: which URLs may be registered, the signing secret, the
 * payload and its Standard Webhooks signature (the `standardwebhooks` package, not a hand-made
 * HMAC), and the retry schedule.
 *
 * `TILLGATE_LOCAL_WEBHOOKS=true` is set by the local stack only (npm start and the tests' local
 * server; the CDK stack never sets it, which an infra test checks): http:// URLs and loopback
 * hosts are then accepted, so a developer can receive on their own machine.
 */
export const LOCAL_WEBHOOKS = process.env.TILLGATE_LOCAL_WEBHOOKS === 'true';

// ---------------------------------------------------------------- URLs

/**
 * Why `raw` cannot be a webhook URL, or undefined when it can. The host is read as the WHATWG
 * URL Standard reads it (Node's URL), so `https://167772161/`, `https://0x0a000001/` and
 * `https://012.0.0.1/` are the IPv4 address 10.0.0.1; an IP literal must be an ordinary unicast
 * address (addressProblem). In AWS the port is 443 or 1024–65535 (no SSH, Redis or port 0 of a
 * receiver's host). A name is not resolved here: the sender checks the address again when it
 * connects.
 */
export function webhookUrlProblem(raw: string, allowLocal = LOCAL_WEBHOOKS): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `must be an absolute ${allowLocal ? 'https:// or http://' : 'https://'} URL`;
  }
  if (url.protocol !== 'https:' && !(allowLocal && url.protocol === 'http:')) {
    return allowLocal ? 'must be an https:// or http:// URL' : 'must be an https:// URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  if (!allowLocal && url.port !== '' && Number(url.port) < 1024 && url.port !== '443') return 'must use port 443 or a port from 1024 to 65535';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) return addressProblem(host, allowLocal);
  // A name that always means this machine (WHATWG and RFC 6761), with or without the root's dot:
  // refused without resolving it.
  const name = host.replace(/\.+$/, '');
  if (!allowLocal && (name === 'localhost' || name.endsWith('.localhost'))) return 'must not point at localhost';
  return undefined;
}

/**
 * Why a receiver may not be at `text` (an IP address), or undefined when it may: it must be an
 * ordinary unicast address (loopback too where the local stack allows it). An IPv6 address that
 * carries IPv4 addresses inside (IPv4-mapped and -compatible, NAT64, 6to4, Teredo's server and
 * client) is judged by every one of them, so `[::127.0.0.1]` or `[64:ff9b::a9fe:a9fe]` is the
 * loopback or metadata address it embeds.
 */
export function addressProblem(text: string, allowLocal = LOCAL_WEBHOOKS): string | undefined {
  const address = ipaddr.process(text);
  if (address.kind() === 'ipv6') {
    const inner = embeddedIPv4(address as ipaddr.IPv6);
    if (inner.length > 0) {
      for (const ipv4 of inner) {
        const problem = rangeProblem(ipv4, allowLocal);
        if (problem) return `${problem}, embedded in ${address.toString()}`;
      }
      return undefined;
    }
  }
  return rangeProblem(address, allowLocal);
}

function rangeProblem(address: ipaddr.IPv4 | ipaddr.IPv6, allowLocal: boolean): string | undefined {
  const range = address.range();
  if (range === 'unicast' || (allowLocal && range === 'loopback')) return undefined;
  const name = RANGE_NAMES[range] ?? `reserved (${range})`;
  return `must not point at ${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} address (${address.toString()})`;
}

/** The IPv4 addresses inside an IPv6 address, by the forms that carry them (none for any other). */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts;
  const ipv4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (address.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
    case 'rfc6052': // NAT64, 64:ff9b::a.b.c.d
      return [ipv4(p[6]!, p[7]!)];
    case '6to4': // 2002:AABB:CCDD::
      return [ipv4(p[1]!, p[2]!)];
    case 'teredo': // 2001:0:server:flags:port:client (the client's address inverted)
      return [ipv4(p[2]!, p[3]!), ipv4(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
  }
  // IPv4-compatible (RFC 4291, deprecated): ::a.b.c.d, beside :: and ::1, which are IPv6's own.
  if (p.slice(0, 6).every((part) => part === 0) && (p[6] !== 0 || p[7]! > 1)) return [ipv4(p[6]!, p[7]!)];
  return [];
}

const RANGE_NAMES: Record<string, string> = {
  unspecified: 'unspecified',
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  multicast: 'multicast',
  broadcast: 'broadcast',
  carrierGradeNat: 'carrier-grade NAT',
  reserved: 'reserved',
};

// ---------------------------------------------------------------- secrets and signatures

/** `whsec_` and the base64 of 32 random bytes (PRODUCT.md: 24–64). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** `{"type","timestamp","data"}`: data is the event as GET /v1.0/events/{id} shows it. */
export function webhookPayload(event: DeliveredEvent): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.created_at,
    data: { id: event.id, type: event.type, resource_id: event.resource_id, created_at: event.created_at },
  });
}

/**
 * The Standard Webhooks headers of one attempt: webhook-id is the event id (the same on every
 * attempt, for receivers to deduplicate on), webhook-timestamp this attempt's time, and one
 * `v1,` signature per secret (two, space-separated, within 24 h of a rotation).
 */
export function webhookHeaders(secrets: readonly string[], event: DeliveredEvent, body: string, at: Date): Record<string, string> {
  const id = String(event.id);
  return {
    'content-type': 'application/json',
    'user-agent': 'tillgate-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}

// ---------------------------------------------------------------- retries

/** PRODUCT.md: about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h after the one before. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400];

/** The schedule in force: WEBHOOK_RETRY_SCHEDULE (comma-separated seconds) replaces it, for the local stack. */
export function retrySchedule(raw = process.env.WEBHOOK_RETRY_SCHEDULE): number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_RETRY_SCHEDULE;
  const steps = raw.split(',').map((part) => Number(part.trim()));
  if (steps.some((step) => !Number.isFinite(step) || step < 0)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be comma-separated non-negative seconds, got "${raw}"`);
  }
  return steps;
}

/**
 * Seconds until the next attempt after `failedAttempts` sends that all failed, or undefined when
 * the schedule is used up. Jitter: ±10 % of the step, so endpoints that failed together do not
 * come back together. A Retry-After (seconds or an HTTP date) longer than the step is honoured
 * up to twice the step; a shorter one does not shorten it.
 */
export function retryDelaySeconds(
  failedAttempts: number,
  retryAfter: string | undefined,
  now: Date,
  schedule = retrySchedule(),
  random = Math.random,
): number | undefined {
  const step = schedule[failedAttempts - 1];
  if (step === undefined) return undefined;
  const jittered = step * (0.9 + 0.2 * random());
  const asked = retryAfterSeconds(retryAfter, now);
  return asked === undefined ? jittered : Math.max(jittered, Math.min(asked, 2 * step));
}

function retryAfterSeconds(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now.getTime()) / 1000);
}

/** Five days of nothing but failed attempts disable an endpoint. */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000;
