/**
 * What PRODUCT.md says GET and DELETE /v1.0/events/{id} must answer for a path, written from the
 * contract, so that events/fuzz.test.ts compares two readings of it, not one with itself (the
 * events list's query strings are judged by http/oracle.ts).
 */
/** The event id a path reaches, or why not: `no-route` (gateway 404) or `bad-id` (400). */
export function eventPathTarget(path: string): { kind: 'no-route' } | { kind: 'bad-id' } | { kind: 'id'; id: number } {
  const { pathname } = new URL(path, 'http://localhost');
  const match = /^\/v1\.0\/events\/([^/]+)$/.exec(pathname);
  if (!match) return { kind: 'no-route' };
  let decoded = match[1]!;
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    /* kept as sent */
  }
  if (!/^[1-9]\d*$/.test(decoded) || !Number.isSafeInteger(Number(decoded))) return { kind: 'bad-id' };
  return { kind: 'id', id: Number(decoded) };
}
