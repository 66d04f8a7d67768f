import { describe, expect, it, vi } from 'vitest';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';

// A limit of 3 unknown codes in a window of 2 seconds, read by the functions when they load.
vi.hoisted(() => {
  process.env.UNKNOWN_CODE_LIMIT = '3';
  process.env.UNKNOWN_CODE_WINDOW_SECONDS = '2';
});

/**
 * The guessing limit's window passing, over HTTP, with a configured limit and a short window
 * (UNKNOWN_CODE_LIMIT=3, UNKNOWN_CODE_WINDOW_SECONDS=2): a request past the limit answers 429, and
 * the same till, after waiting what Retry-After said, is served. Would catch: a refusal that never
 * ends, or a Retry-After shorter than the refusal (a till obeying it refused again).
 */
const ctx = useLocalApi();

const check = (codes: string[]) =>
  send(ctx.api, ctx.account.token, ({ pos }) =>
    pos.POST('/v2.0/validated_codes', { body: { transaction: { site_id: 'S-1', pos_transaction_id: 'T-1', codes } } }),
  );

describe('the guessing limit, its window passing', () => {
  it('refused past the limit; served again after Retry-After', async () => {
    const refused = await check(['NOPE-A', 'NOPE-B', 'NOPE-C', 'NOPE-D']);
    expect(refused.status, refused.text).toBe(429);
    expect(refused.json.transaction.errors[0].message).toContain('more than 3 in 2 seconds');
    const wait = Number(refused.headers.get('retry-after'));
    // The window and one of its 60 slots, rounded up to whole seconds.
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(3);
    // A till obeys Retry-After: waiting it is the protocol, not a guess at timing.
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    const served = await check(['NOPE-E']);
    expect(served.status, served.text).toBe(422);
    expect(served.json.transaction.display_messages[0].message_id).toBe('code_not_found');
  });
});
