import { badRequest } from './errors.ts';

/**
 * Opaque list cursors: the last id (or code, or redemption) of a page, bound to the account and
 * the filters that produced it. A cursor of another account or of other filters, or one that is not ours at all,
 * answers 400. Tampering cannot reach a foreign record anyway: every list is a Query on keys
 * that start with the caller's account.
 */
interface CursorContent {
  readonly v: 1;
  readonly a: number;
  readonly f: string;
  readonly after: number | string;
}

const DEFAULT_LIMIT = 100;

export interface Page {
  readonly limit: number;
  readonly afterId: number;
}

export function pageOf(query: { limit?: string; cursor?: string }, accountId: number, filters: string): Page {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit, afterId: 0 };
  const after = cursorAfter(query.cursor, accountId, filters, (value) => Number.isSafeInteger(value) && (value as number) >= 0);
  return { limit, afterId: after as number };
}

/** A page of a list ordered by code: after the last code of the previous page. */
export function codePageOf(query: { limit?: string; cursor?: string }, accountId: number, filters: string) {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit, afterCode: undefined };
  const after = cursorAfter(query.cursor, accountId, filters, (value) => typeof value === 'string' && /^[A-Z0-9-]{1,48}$/.test(value));
  return { limit, afterCode: after as string };
}

/** A redemption's sort key: its time (UTC with milliseconds), then its transaction's digest (SHA-256, base64url). */
const REDEMPTION_ORDER = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[A-Za-z0-9_-]{43}$/;

/**
 * A page of a code's redemptions, in redemption order: after the sort key of the last one of the
 * previous page, its time (UTC with milliseconds) and its transaction.
 */
export function redemptionPageOf(query: { limit?: string; cursor?: string }, accountId: number, filters: string) {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit, after: undefined };
  const after = cursorAfter(query.cursor, accountId, filters, (value) => typeof value === 'string' && REDEMPTION_ORDER.test(value));
  return { limit, after: after as string };
}

const malformed = () => badRequest('cursor is malformed: pass the next_cursor of the previous page as it is', 'cursor');

function cursorAfter(cursor: string, accountId: number, filters: string, valid: (after: unknown) => boolean): unknown {
  let content: Partial<CursorContent>;
  try {
    content = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (content?.v !== 1 || !valid(content.after)) throw malformed();
  if (content.a !== accountId || content.f !== filters) {
    throw badRequest('cursor belongs to another account or to other filters', 'cursor');
  }
  return content.after;
}

function nextCursor(accountId: number, filters: string, last: number | string): string {
  const content: CursorContent = { v: 1, a: accountId, f: filters, after: last };
  return Buffer.from(JSON.stringify(content)).toString('base64url');
}

/** `{"<name>":[…],"next_cursor":…}`: a cursor only when another page follows. */
export function pageBody<T extends object, U>(
  name: string,
  page: { items: T[]; more: boolean },
  present: (item: T) => U,
  accountId: number,
  filters: string,
  /** Where the next page starts: the item's id, unless the list is ordered by something else. */
  position: (item: T) => number | string = (item) => (item as { id: number }).id,
) {
  const last = page.items.at(-1);
  return { [name]: page.items.map(present), next_cursor: page.more && last ? nextCursor(accountId, filters, position(last)) : null };
}
