import { createHash } from 'node:crypto';
import type { EtagCount } from '#functions/routes';
import { badRequest } from './errors.ts';
import { MAX_IF_MATCH_LENGTH } from './limits.ts';

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** Weak ETag of a JSON body: the hash of its bytes (see entityTag for the answers that hold a count). */
export const weakEtag = (body: string) => `W/"${digest(body)}"`;

/**
 * The ETag of a JSON answer. Of a route whose row names a count (`countInEtag`: the generator's
 * `times_redeemed`, which a worker moves while nobody writes the generator), the tag is in two
 * parts, `W/"<hash of the body without the count>.<count>"`: it changes whenever anything in the
 * body does, so a conditional GET answers 304 only when nothing changed, while If-Match
 * (`ifMatchHolds`) compares the first part only, so a count that moved since the tag was read
 * does not fail a PATCH that sets none of it. Every other answer's tag is the hash of its body.
 * Made from the body alone, so a replayed answer (stored bytes) carries the tag its first did.
 */
export function entityTag(body: string, count: EtagCount | undefined): string {
  if (count !== undefined) {
    const parsed = JSON.parse(body) as Record<string, Record<string, unknown> | undefined>;
    const resource = parsed[count.root];
    const value = resource?.[count.field];
    if (resource && Number.isSafeInteger(value)) {
      delete resource[count.field];
      return `W/"${digest(JSON.stringify(parsed))}.${value}"`;
    }
  }
  return weakEtag(body);
}

/** `*` or a comma-separated list of entity tags (RFC 9110 §8.8.3): what If-Match may hold. */
const ENTITY_TAG = '(?:W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"';
const ENTITY_TAG_LIST = new RegExp(`^[ \\t]*(?:\\*|${ENTITY_TAG}(?:[ \\t]*,[ \\t]*${ENTITY_TAG})*)[ \\t]*$`);

const isEntityTagList = (value: string) => value.length <= MAX_IF_MATCH_LENGTH && ENTITY_TAG_LIST.test(value);

/** The If-Match header of a conditional PATCH: absent, or entity tags (else 400 naming it). */
export function ifMatchOf(headers: Readonly<Record<string, string | undefined>>): string | undefined {
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined && !isEntityTagList(ifMatch)) {
    throw badRequest(`If-Match must be * or entity tags as the ETag header sends them, e.g. W/"…" (at most ${MAX_IF_MATCH_LENGTH} characters)`, 'If-Match');
  }
  return ifMatch;
}

const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/** Weak comparison (RFC 9110 §13.1.2): `W/"x"` matches `"x"`; `*` matches anything. What If-None-Match uses. */
export function etagMatches(condition: string | undefined, etag: string): boolean {
  if (!condition) return false;
  return condition.split(',').some((candidate) => candidate.trim() === '*' || opaque(candidate) === opaque(etag));
}

/**
 * Whether a PATCH's If-Match holds against the resource's current tag: weak comparison of the
 * tags without their count (`W/"<hash>.<count>"` is compared as `W/"<hash>"`, see entityTag), so
 * only a change of what a PATCH can change fails it. A tag without a count compares whole.
 */
export function ifMatchHolds(condition: string, currentTag: string): boolean {
  const withoutCount = (tag: string) => opaque(tag).replace(/\.(?:0|[1-9][0-9]*)"$/, '"');
  return condition.split(',').some((candidate) => candidate.trim() === '*' || withoutCount(candidate) === withoutCount(currentTag));
}
