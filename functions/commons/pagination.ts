import { badRequest } from './errors.ts';

/**
 * Opaque list cursors: the last id of a page, bound to the account and the filters that
 * produced it. A cursor of another account or of other filters, or one that is not ours at all,
 * answers 400. Tampering cannot reach a foreign record anyway: every list is a Query on keys
 * that start with the caller's account.
 */
interface CursorContent {
  readonly v: 1;
  readonly a: number;
  readonly f: string;
  readonly after: number;
}

export const DEFAULT_LIMIT = 100;

export interface Page {
  readonly limit: number;
  readonly afterId: number;
}

export function pageOf(query: { limit?: string; cursor?: string }, accountId: number, filters: string): Page {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit, afterId: 0 };
  let content: Partial<CursorContent>;
  try {
    content = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('cursor is malformed: pass the next_cursor of the previous page as it is', 'cursor');
  }
  if (content?.v !== 1 || !Number.isSafeInteger(content.after) || (content.after as number) < 0) {
    throw badRequest('cursor is malformed: pass the next_cursor of the previous page as it is', 'cursor');
  }
  if (content.a !== accountId || content.f !== filters) {
    throw badRequest('cursor belongs to another account or to other filters', 'cursor');
  }
  return { limit, afterId: content.after as number };
}

export function nextCursor(accountId: number, filters: string, lastId: number): string {
  const content: CursorContent = { v: 1, a: accountId, f: filters, after: lastId };
  return Buffer.from(JSON.stringify(content)).toString('base64url');
}

/** `{"<name>":[…],"next_cursor":…}`: a cursor only when another page follows. */
export function pageBody<T extends { id: number }, U>(
  name: string,
  page: { items: T[]; more: boolean },
  present: (item: T) => U,
  accountId: number,
  filters: string,
) {
  const last = page.items.at(-1);
  return { [name]: page.items.map(present), next_cursor: page.more && last ? nextCursor(accountId, filters, last.id) : null };
}
