import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, newSecret, retryDelaySeconds, retrySchedule, webhookHeaders, webhookPayload } from '../../../functions/webhooks/rules.ts';
import { Webhook } from 'standardwebhooks';

/** The retry schedule, its jitter and Retry-After, and the signing: pure functions, no clock but the one passed. */
const now = new Date('2026-11-22T12:00:00Z');
const fixed = (value: number) => () => value;

describe('the retry schedule', () => {
  it('is PRODUCT.md’s: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, then the delivery fails', () => {
    expect(DEFAULT_RETRY_SCHEDULE).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400]);
    expect(DEFAULT_RETRY_SCHEDULE.map((_, i) => retryDelaySeconds(i + 1, undefined, now, DEFAULT_RETRY_SCHEDULE, fixed(0.5)))).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(retryDelaySeconds(10, undefined, now, DEFAULT_RETRY_SCHEDULE, fixed(0.5))).toBeUndefined();
  });

  it('jitters each step by ±10 %', () => {
    expect(retryDelaySeconds(2, undefined, now, DEFAULT_RETRY_SCHEDULE, fixed(0))).toBeCloseTo(270, 6);
    expect(retryDelaySeconds(2, undefined, now, DEFAULT_RETRY_SCHEDULE, fixed(0.999999))).toBeCloseTo(330, 3);
  });

  it('honours a longer Retry-After up to twice the step, in seconds or as an HTTP date, and never shortens the step', () => {
    expect(retryDelaySeconds(2, '600', now, DEFAULT_RETRY_SCHEDULE, fixed(0.5))).toBe(600);
    expect(retryDelaySeconds(2, '100000', now, DEFAULT_RETRY_SCHEDULE, fixed(0.5))).toBe(600);
    expect(retryDelaySeconds(2, '450', now, DEFAULT_RETRY_SCHEDULE, fixed(0.5))).toBe(450);
    expect(retryDelaySeconds(2, '10', now, DEFAULT_RETRY_SCHEDULE, fixed(0.5))).toBe(300);
    expect(retryDelaySeconds(2, new Date(now.getTime() + 500_000).toUTCString(), now, DEFAULT_RETRY_SCHEDULE, fixed(0.5))).toBe(500);
    expect(retryDelaySeconds(2, 'soon', now, DEFAULT_RETRY_SCHEDULE, fixed(0.5))).toBe(300);
  });

  it('is replaced by WEBHOOK_RETRY_SCHEDULE, and refuses a malformed one', () => {
    expect(retrySchedule('1,1,1')).toEqual([1, 1, 1]);
    expect(retrySchedule(' 2, 3 ')).toEqual([2, 3]);
    expect(retrySchedule('')).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(() => retrySchedule('1,x')).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => retrySchedule('-1')).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });
});

describe('signing', () => {
  const event = { id: 1017, type: 'transaction.voided' as const, resource_id: 's/T', created_at: '2026-11-22T11:59:59.123Z' };

  it('makes a secret of whsec_ and 32 random bytes', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(secret);
  });

  it('signs {id}.{timestamp}.{body} as Standard Webhooks says, once per secret, space-separated', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const body = webhookPayload(event);
    expect(JSON.parse(body)).toEqual({ type: event.type, timestamp: event.created_at, data: event });
    const headers = webhookHeaders([current, previous], event, body, new Date());
    expect(headers['webhook-id']).toBe('1017');
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(body.replace('1017', '1018'), headers)).toThrow();
  });
});
