/**
 * What PRODUCT.md says every route's answer must be, whatever the feature: the body size limit,
 * the content types read as JSON, the body's envelope (size, type, UTF-8, JSON, root key) and the
 * lists' query strings. Written from the contract, independently of the service's own validator,
 * so that the fuzzers (codes/, redemption/, events/) compare two readings of the contract, not one
 * with itself; each feature's oracle.ts judges its own bodies and paths.
 */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * Trims a header value the way HTTP does: only SP and HTAB are optional whitespace (RFC 9110
 * §5.5, §5.6.3). `String.prototype.trim()` also strips U+00A0 and the other Unicode spaces,
 * which are part of the value on the wire (obs-text), so the oracle must not use it on headers.
 */
export const trimOws = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, '');

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const codePoints = (text: string) => [...text].length;

/** A body judged from its text once size and content type passed (the header-fuzzing properties). */
export type ResourceVerdict =
  | { kind: 'malformed' } // 400
  | { kind: 'invalid' } // 422
  | { kind: 'valid'; value: Record<string, unknown> };

/** Parses a body as the contract reads it: malformed JSON or wrong top-level shape is a 400. */
export function parseRoot(text: string, root: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || !Object.hasOwn(parsed, root) || !isObject(parsed[root])) return undefined;
  return parsed[root] as Record<string, unknown>;
}

/** `application/json` or `+json`, with no charset or a UTF-8 one. */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return true;
  const [type = '', ...parameters] = value.split(';').map((p) => trimOws(p).toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  const charset = parameters.map((p) => p.replace(/[ \t]*=[ \t]*/, '=')).find((p) => p.startsWith('charset='));
  return charset === undefined || ['charset=utf-8', 'charset=utf8', 'charset="utf-8"'].includes(charset);
}

/** A positive integer written plainly: ASCII digits, no sign, no leading zero, within 2^53 − 1. */
export function positiveInteger(text: string): number | undefined {
  if (!/^[0-9]+$/.test(text) || text.startsWith('0')) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * The record id a path `/v1.0/<collection>/{id}` reaches, or why not: `no-route` (the gateway's
 * 404) or `bad-id` (400). The segment is decoded as the gateway does; a malformed escape stays as sent.
 */
export function idPathTarget(collection: string, path: string): { kind: 'no-route' } | { kind: 'bad-id' } | { kind: 'id'; id: number } {
  const { pathname } = new URL(path, 'http://localhost');
  const prefix = `/v1.0/${collection}/`;
  const segment = pathname.startsWith(prefix) ? pathname.slice(prefix.length) : '';
  if (segment === '' || segment.includes('/')) return { kind: 'no-route' };
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    /* kept as sent */
  }
  const id = positiveInteger(decoded);
  return id === undefined ? { kind: 'bad-id' } : { kind: 'id', id };
}

/** `limit`: an integer 1–1000, written plainly. */
function pageLimit(text: string): number | undefined {
  const value = positiveInteger(text);
  return value !== undefined && value <= 1000 ? value : undefined;
}

// ---------------------------------------------------------------- query strings

export type QueryVerdict =
  /** 400 naming one of `fields` (all of `must` are wrong; `may` are wrong or not). */
  | { kind: 'bad'; fields: Set<string> }
  /** Only `may` parameters (tampered cursors) are in doubt: a 400 naming them, or a safe page. */
  | { kind: 'either'; fields: Set<string>; limit: number; storeId?: number }
  | { kind: 'ok'; limit: number; storeId?: number; cursor?: string };

/**
 * Judges a query string of a list route. `cursorKind` says what the test knows of the cursor it
 * sent: `own` (a real cursor of the caller for exactly these filters), `foreign` (another
 * account's, or other filters', real or re-encoded), `tampered` (the server may or may not tell).
 */
export function judgeListQuery(
  search: string,
  allowed: readonly string[],
  cursorKind: (cursor: string, storeId: number | undefined) => 'own' | 'foreign' | 'tampered',
): QueryVerdict {
  const pairs = [...new URLSearchParams(search)];
  const counts = new Map<string, number>();
  for (const [name] of pairs) counts.set(name, (counts.get(name) ?? 0) + 1);
  const must = new Set<string>();
  const may = new Set<string>();
  const values = new Map(pairs);
  for (const [name, count] of counts) if (count > 1 || !allowed.includes(name)) must.add(name);

  const limitText = values.get('limit');
  const limit = limitText === undefined ? 100 : pageLimit(limitText);
  if (limit === undefined && !must.has('limit')) must.add('limit');
  const storeText = allowed.includes('store_id') ? values.get('store_id') : undefined;
  const storeId = storeText === undefined ? undefined : positiveInteger(storeText);
  if (storeText !== undefined && storeId === undefined) must.add('store_id');
  const cursor = values.get('cursor');
  if (cursor !== undefined && !must.has('cursor')) {
    const kind = cursorKind(cursor, storeId);
    if (kind === 'foreign') must.add('cursor');
    if (kind === 'tampered') may.add('cursor');
  }
  if (must.size > 0) return { kind: 'bad', fields: new Set([...must, ...may]) };
  if (may.size > 0) return { kind: 'either', fields: may, limit: limit!, storeId };
  return { kind: 'ok', limit: limit!, storeId, cursor };
}

// ---------------------------------------------------------------- bodies

export type BodyVerdict =
  | { kind: 'too-large' } // 413
  | { kind: 'media-type' } // 415
  | { kind: 'malformed' } // 400
  | { kind: 'invalid'; fields: Set<string> } // 422 naming these fields
  | { kind: 'valid'; value: Record<string, unknown> };

/** `application/json` or `application/…+json`, with no charset or a UTF-8 one; absent reads as JSON. */
function jsonMediaType(value: string | undefined): boolean {
  if (value === undefined) return true;
  const [type = '', ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (!(type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type))) return false;
  for (const parameter of parameters) {
    const at = parameter.indexOf('=');
    if (at < 0) continue;
    const name = parameter.slice(0, at).trim();
    const charset = parameter
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (name === 'charset' && charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

/** Size, content type, UTF-8 and JSON, in the contract's order; the parsed JSON when all pass. */
export function envelope(bytes: Buffer, contentType: string | undefined): { verdict: BodyVerdict } | { parsed: unknown } {
  if (bytes.length > MAX_BODY_BYTES) return { verdict: { kind: 'too-large' } };
  if (!jsonMediaType(contentType?.trim())) return { verdict: { kind: 'media-type' } };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { verdict: { kind: 'malformed' } };
  }
  try {
    return { parsed: JSON.parse(text) };
  } catch {
    return { verdict: { kind: 'malformed' } };
  }
}
