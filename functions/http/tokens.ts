import { createHash, randomBytes } from 'node:crypto';
import { numberFromEnv } from '#runtime/config';
import { findApiKey, saveApiKey, TOKEN_SCOPES, type ApiKey, type TokenScope } from '#data/api-keys';

export { TOKEN_SCOPES, type TokenScope } from '#data/api-keys';

/**
 * Tokens are `tg_` followed by 32 random bytes in base64url (256 bits). Only their SHA-256 is
 * stored; a slow password hash buys nothing for secrets of that strength. The lookup is by hash
 * equality in DynamoDB, so no token is ever compared byte by byte in this process.
 */
export const TOKEN_SHAPE = /^tg_[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return `tg_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * What a sent token turned out to be. The caller is told which (a token that was revoked is not
 * "required"), never anything about another token. `scope` is undefined for a key written before
 * scopes existed.
 */
export type TokenCheck =
  | { readonly outcome: 'valid'; readonly accountId: number; readonly scope: TokenScope | undefined }
  | { readonly outcome: 'malformed' | 'unknown' | 'revoked' };

/**
 * Valid tokens are remembered for TOKEN_CACHE_SECONDS (default 30) per execution environment,
 * with their scope, which saves a read per request; a revoked token (or a changed scope)
 * therefore takes effect within that bound. Unknown or revoked tokens are never cached, so a new
 * token works at once.
 */
const cacheMilliseconds = numberFromEnv('TOKEN_CACHE_SECONDS', 30) * 1000;
const CACHE_LIMIT = 1000;
const cache = new Map<string, { accountId: number; scope: TokenScope | undefined; expiresAt: number }>();

export async function checkToken(token: string): Promise<TokenCheck> {
  if (!TOKEN_SHAPE.test(token)) return { outcome: 'malformed' };
  const hash = hashToken(token);
  const now = Date.now();
  const hit = cache.get(hash);
  if (hit && hit.expiresAt > now) return { outcome: 'valid', accountId: hit.accountId, scope: hit.scope };

  const key = await findApiKey(hash);
  if (!key || key.revoked_at !== undefined) {
    cache.delete(hash);
    return { outcome: key ? 'revoked' : 'unknown' };
  }
  const scope = isTokenScope(key.scope) ? key.scope : undefined;
  if (cacheMilliseconds > 0) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(hash, { accountId: key.account_id, scope, expiresAt: now + cacheMilliseconds });
  }
  return { outcome: 'valid', accountId: key.account_id, scope };
}

/** The account of a valid token (any scope), else undefined: for tools that only need to know it works. */
export async function accountForToken(token: string | undefined): Promise<number | undefined> {
  if (token === undefined) return undefined;
  const check = await checkToken(token);
  return check.outcome === 'valid' ? check.accountId : undefined;
}

export const isTokenScope = (value: unknown): value is TokenScope => TOKEN_SCOPES.includes(value as TokenScope);

/** Whether a token of scope `token` may call a route that needs `needed`. No scope allows nothing. */
export const scopeAllows = (token: TokenScope | undefined, needed: Exclude<TokenScope, 'all'>): boolean => token === 'all' || token === needed;

/**
 * Token names are shown in `list`, one row per line and tab-separated: printable text only (no
 * control, format or separator characters, which could forge a row or reorder what is shown),
 * 1 to 64 characters, without leading or trailing white space.
 */
export function tokenNameProblem(name: string): string | undefined {
  const length = [...name].length;
  if (length < 1 || length > 64) return `must be 1 to 64 characters (got ${length})`;
  if (/[\p{C}\p{Zl}\p{Zp}]/u.test(name)) return 'must be printable text: no tabs, line breaks or other control or format characters';
  if (name.trim() !== name) return 'must not start or end with white space';
  return undefined;
}

/**
 * Creates a token for an account and stores its hash with its scope. The token is returned once,
 * to be shown once; nothing can recover it later.
 */
export async function issueToken(accountId: number, name: string, scope: TokenScope, now = new Date()): Promise<{ token: string; key: ApiKey }> {
  const problem = tokenNameProblem(name);
  if (problem) throw new Error(`Token name ${problem}`);
  if (!isTokenScope(scope)) throw new Error(`Token scope must be one of ${TOKEN_SCOPES.join(', ')}`);
  const token = newToken();
  const key: ApiKey = {
    token_hash: hashToken(token),
    key_id: `key_${randomBytes(8).toString('hex')}`,
    account_id: accountId,
    name,
    scope,
    created_at: now.toISOString(),
  };
  await saveApiKey(key);
  return { token, key };
}
