import { describe, expect, it } from 'vitest';
import { entityTag, etagMatches, ifMatchHolds, weakEtag } from '../../../functions/http/etags.ts';
import { GENERATOR_USES } from '../../../functions/routes.ts';

/**
 * The entity tags (functions/http/etags.ts): a code generator's in two parts, so that a
 * conditional GET sees its times_redeemed move and a PATCH's If-Match does not.
 */
const generator = (fields: Record<string, unknown>) => JSON.stringify({ code_generator: { id: 7, description: 'Winter', ...fields } });

describe("a code generator's ETag", () => {
  it('is the hash of the body without times_redeemed, then times_redeemed', () => {
    const tag = entityTag(generator({ times_redeemed: 42 }), GENERATOR_USES);
    expect(tag).toBe(`${weakEtag(JSON.stringify({ code_generator: { id: 7, description: 'Winter' } })).slice(0, -1)}.42"`);
    expect(tag).toMatch(/^W\/"[0-9a-f]{32}\.42"$/);
  });

  it('changes with times_redeemed (If-None-Match then answers 200), and with any other field', () => {
    const before = entityTag(generator({ times_redeemed: 1 }), GENERATOR_USES);
    expect(etagMatches(before, entityTag(generator({ times_redeemed: 1 }), GENERATOR_USES))).toBe(true);
    expect(etagMatches(before, entityTag(generator({ times_redeemed: 2 }), GENERATOR_USES))).toBe(false);
    expect(etagMatches(before, entityTag(generator({ times_redeemed: 1, description: 'Spring' }), GENERATOR_USES))).toBe(false);
  });

  it('holds for If-Match while only times_redeemed moved, weak or strong, alone or in a list; not once another field changed', () => {
    const read = entityTag(generator({ times_redeemed: 3 }), GENERATOR_USES);
    const now = entityTag(generator({ times_redeemed: 9 }), GENERATOR_USES);
    expect(ifMatchHolds(read, now)).toBe(true);
    expect(ifMatchHolds(read.replace(/^W\//, ''), now)).toBe(true);
    expect(ifMatchHolds(`"nope", ${read}`, now)).toBe(true);
    expect(ifMatchHolds('*', now)).toBe(true);
    expect(ifMatchHolds(read, entityTag(generator({ times_redeemed: 3, description: 'Spring' }), GENERATOR_USES))).toBe(false);
    // A tag of the body's bytes (another resource's, or a generator's before this scheme) is not the hash of the rest.
    expect(ifMatchHolds(weakEtag(generator({ times_redeemed: 3 })), now)).toBe(false);
  });

  it('is the hash of the bytes for every other answer, and for a body without the count', () => {
    const body = JSON.stringify({ event: { id: 1 } });
    expect(entityTag(body, undefined)).toBe(weakEtag(body));
    expect(entityTag(body, GENERATOR_USES)).toBe(weakEtag(body));
    expect(ifMatchHolds(weakEtag(body), weakEtag(body))).toBe(true);
    expect(ifMatchHolds(weakEtag(body), weakEtag(`${body} `))).toBe(false);
  });
});
