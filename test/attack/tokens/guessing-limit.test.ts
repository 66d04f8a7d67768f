import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { countUnknownCodes } from '../../../functions/data/unknown-codes.ts';

/**
 * The guessing limit's count (functions/data/unknown-codes.ts) against DynamoDB Local, on an
 * injected clock: no 60 s sleeps. 120 unknown codes in any minute are served, the 121st refused
 * until the minute has passed, per token, a sliding window (not a fixed minute that a guesser could
 * straddle for 240), and racing requests lose no count. Would catch: an off-by-one at the limit,
 * a window that resets on the minute, counts shared between tokens, a read-modify-write that
 * loses increments under concurrency, a Retry-After that refuses a request it should serve.
 */
const minute = { limit: 120, windowSeconds: 60 };
const aKey = () => `key_${randomBytes(8).toString('hex')}`;
/** A moment well inside a stretch of the counter's items (its slots are one second). */
const T0 = Date.UTC(2026, 10, 26, 8, 0, 30, 250);

describe('unknown codes per token, 120 in any minute', () => {
  it('the 121st in a minute is refused with the wait until one more fits; the minute after, served', async () => {
    const key = aKey();
    for (let i = 0; i < 12; i++) {
      const verdict = await countUnknownCodes(key, 10, T0 + i * 1000, minute);
      expect(verdict, `request ${i + 1}`).toEqual({ allowed: true, counted: (i + 1) * 10 });
    }
    const refused = await countUnknownCodes(key, 1, T0 + 12_000, minute);
    expect(refused).toMatchObject({ allowed: false, counted: 121 });
    // 121 counted (the refused one too): one more fits once the first request's 10 left the
    // window, 60 to 61 s after it (slot T0's second + 61 s), i.e. 49 s from now, rounded up.
    const wait = (refused as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(wait).toBe(Math.ceil((Math.floor(T0 / 1000) * 1000 + 61_000 - (T0 + 12_000)) / 1000));
    // Still refused a moment before the wait is over; served once it is.
    expect((await countUnknownCodes(key, 1, T0 + 12_000 + (wait - 2) * 1000, minute)).allowed).toBe(false);
    const after = await countUnknownCodes(key, 1, T0 + 12_000 + wait * 1000, minute);
    expect(after.allowed).toBe(true);
    // A whole quiet minute later everything before has left the window.
    expect(await countUnknownCodes(key, 120, T0 + 200_000, minute)).toEqual({ allowed: true, counted: 120 });
    expect((await countUnknownCodes(key, 1, T0 + 200_000, minute)).allowed).toBe(false);
  });

  it('slides: 120 at the end of one minute and 1 at the start of the next is 121 in a minute', async () => {
    const key = aKey();
    const endOfMinute = Date.UTC(2026, 10, 26, 8, 0, 59, 900);
    expect((await countUnknownCodes(key, 120, endOfMinute, minute)).allowed).toBe(true);
    expect(await countUnknownCodes(key, 1, endOfMinute + 200, minute)).toMatchObject({ allowed: false, counted: 121 });
  });

  it('counts per token: another token of the same account is not limited by the first', async () => {
    const guesser = aKey();
    const other = aKey();
    expect((await countUnknownCodes(guesser, 121, T0, minute)).allowed).toBe(false);
    expect(await countUnknownCodes(other, 1, T0, minute)).toEqual({ allowed: true, counted: 1 });
  });

  it('racing requests lose no count: of 20 concurrent unknown codes over a limit of 12, exactly 12 are served', async () => {
    // 20 at once (each an UpdateItem and a GetItem): many more time out DynamoDB Local's connections on a loaded 2-core machine.
    const key = aKey();
    const verdicts = await Promise.all(Array.from({ length: 20 }, () => countUnknownCodes(key, 1, T0, { limit: 12, windowSeconds: 60 })));
    expect(verdicts.filter((verdict) => verdict.allowed)).toHaveLength(12);
    // Each saw a distinct total: every increment was counted exactly once.
    expect(new Set(verdicts.map((verdict) => verdict.counted)).size).toBe(20);
    expect(Math.max(...verdicts.map((verdict) => verdict.counted))).toBe(20);
  });
});
