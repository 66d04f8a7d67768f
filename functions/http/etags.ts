import { createHash } from 'node:crypto';
import { badRequest } from './errors.ts';
import { MAX_IF_MATCH_LENGTH } from './limits.ts';

/** Weak ETag of a JSON body: what GET answers and what If-None-Match and If-Match compare with. */
export const weakEtag = (body: string) => `W/"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;

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

/** Weak comparison (RFC 9110 §13.1.2): `W/"x"` matches `"x"`; `*` matches anything. */
export function etagMatches(condition: string | undefined, etag: string): boolean {
  if (!condition) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return condition.split(',').some((candidate) => candidate.trim() === '*' || opaque(candidate) === opaque(etag));
}
