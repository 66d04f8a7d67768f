import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { secretKeyReader } from '#runtime/secret-value';
import { badRequest } from './errors.ts';

/**
 * Opaque list cursors: the last id (or code, or redemption) of a page, bound to the account and
 * the filters that produced it, encrypted and authenticated (AES-256-GCM with the cursor key of
 * functions/secrets.ts), so that a cursor shows no code, id or filter in a URL or a log, and a
 * changed one is refused. A cursor of another account or of other filters, or one that is not
 * ours at all, answers 400. Tampering could not reach a foreign record anyway: every list is a
 * Query on keys that start with the caller's account.
 *
 * The form: base64url of a version byte (1), a 12-byte nonce, the ciphertext of the JSON text
 * `[account, filters, after]`, and GCM's 16-byte tag; the version byte is authenticated too. The
 * nonce is an HMAC of the plaintext (a synthetic nonce, as in SIV), not random: the same page
 * gets the same cursor, so its ETag, and If-None-Match's 304, stay as they were; two different
 * plaintexts never share a nonce (short of a 96-bit collision). Both keys, the encryption's and
 * the nonce's, are derived from the cursor key with HKDF-SHA256 under labels of their own.
 */
type CursorContent = [account: number, filters: string, after: number | string];

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The cursor key could not be read (Secrets Manager refused, timed out or is unreachable, or the
 * secret is not of the key's form): a transient fault of functions/http/errors.ts, answered 503.
 */
class CursorKeyUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CursorKeyUnavailableError';
  }
}

/** Made at the first list request, so that a function that imports this module and lists nothing needs no key. */
let cursorKeyReader: (() => Promise<Buffer>) | undefined;
let derived: { readonly from: Buffer; readonly encryption: Buffer; readonly nonce: Buffer } | undefined;
async function cursorKeys(): Promise<{ readonly encryption: Buffer; readonly nonce: Buffer }> {
  cursorKeyReader ??= secretKeyReader(
    'cursorKey',
    'cursor key',
    (message, options) => new CursorKeyUnavailableError(message, options),
    'docs/security.md, "List cursors"',
  );
  const key = await cursorKeyReader();
  if (derived?.from !== key) {
    const subkey = (label: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), label, 32));
    derived = { from: key, encryption: subkey('tillgate list cursor: encryption'), nonce: subkey('tillgate list cursor: nonce') };
  }
  return derived;
}

const DEFAULT_LIMIT = 100;

export interface Page {
  readonly limit: number;
  readonly afterId: number;
}

export async function pageOf(query: { limit?: string; cursor?: string }, accountId: number, filters: string): Promise<Page> {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit, afterId: 0 };
  const after = await cursorAfter(query.cursor, accountId, filters, (value) => Number.isSafeInteger(value) && (value as number) >= 0);
  return { limit, afterId: after as number };
}

/** A page of a list ordered by code: after the last code of the previous page. */
export async function codePageOf(query: { limit?: string; cursor?: string }, accountId: number, filters: string) {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit, afterCode: undefined };
  const after = await cursorAfter(query.cursor, accountId, filters, (value) => typeof value === 'string' && /^[A-Z0-9-]{1,48}$/.test(value));
  return { limit, afterCode: after as string };
}

/** A redemption's sort key: its time (UTC with milliseconds), then its transaction's digest (SHA-256, base64url). */
const REDEMPTION_ORDER = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[A-Za-z0-9_-]{43}$/;

/**
 * A page of a code's redemptions, in redemption order: after the sort key of the last one of the
 * previous page, its time (UTC with milliseconds) and its transaction.
 */
export async function redemptionPageOf(query: { limit?: string; cursor?: string }, accountId: number, filters: string) {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (query.cursor === undefined) return { limit, after: undefined };
  const after = await cursorAfter(query.cursor, accountId, filters, (value) => typeof value === 'string' && REDEMPTION_ORDER.test(value));
  return { limit, after: after as string };
}

const malformed = () => badRequest('cursor is malformed: pass the next_cursor of the previous page as it is', 'cursor');

async function cursorAfter(cursor: string, accountId: number, filters: string, valid: (after: unknown) => boolean): Promise<unknown> {
  const bytes = Buffer.from(cursor, 'base64url');
  // base64url decoding skips what is not of its alphabet: only a cursor that is its own encoding is ours.
  if (bytes.length < 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== VERSION || bytes.toString('base64url') !== cursor) throw malformed();
  const { encryption } = await cursorKeys();
  let content: unknown;
  try {
    const decipher = createDecipheriv('aes-256-gcm', encryption, bytes.subarray(1, 1 + NONCE_BYTES));
    decipher.setAAD(bytes.subarray(0, 1));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
    content = JSON.parse(plain.toString('utf8'));
  } catch {
    // A changed byte fails GCM's tag: the cursor is not one this service made with this key.
    throw malformed();
  }
  if (!Array.isArray(content) || content.length !== 3 || !valid(content[2])) throw malformed();
  const [account, ofFilters, after] = content as CursorContent;
  if (account !== accountId || ofFilters !== filters) {
    throw badRequest('cursor belongs to another account or to other filters', 'cursor');
  }
  return after;
}

async function nextCursor(accountId: number, filters: string, last: number | string): Promise<string> {
  const plain = JSON.stringify([accountId, filters, last] satisfies CursorContent);
  const keys = await cursorKeys();
  const version = Buffer.from([VERSION]);
  const nonce = createHmac('sha256', keys.nonce).update(version).update(plain).digest().subarray(0, NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.encryption, nonce);
  cipher.setAAD(version);
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([version, nonce, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** `{"<name>":[…],"next_cursor":…}`: a cursor only when another page follows. */
export async function pageBody<T extends object, U>(
  name: string,
  /** `next`: where the next page starts when the list says so itself (a page cut short, data/codes.ts listCodes). */
  page: { items: T[]; more: boolean; next?: number | string },
  present: (item: T) => U,
  accountId: number,
  filters: string,
  /** Where the next page starts: the item's id, unless the list is ordered by something else. */
  position: (item: T) => number | string = (item) => (item as { id: number }).id,
) {
  const last = page.items.at(-1);
  const next = page.next ?? (last && position(last));
  return { [name]: page.items.map(present), next_cursor: page.more && next !== undefined ? await nextCursor(accountId, filters, next) : null };
}
