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
  | {
      readonly outcome: 'valid';
      readonly accountId: number;
      readonly scope: TokenScope | undefined;
      /** The key's public handle: what per-token limits count by (never the token). */
      readonly keyId: string;
      /** The sites a bound till's token serves; undefined: every site. */
      readonly sites: readonly string[] | undefined;
    }
  | { readonly outcome: 'malformed' | 'unknown' | 'revoked' };

/**
 * Valid tokens are remembered for TOKEN_CACHE_SECONDS (default 30) per execution environment,
 * with their scope, which saves a read per request; a revoked token (or a changed scope)
 * therefore takes effect within that bound. Unknown or revoked tokens are never cached, so a new
 * token works at once.
 */
const cacheMilliseconds = numberFromEnv('TOKEN_CACHE_SECONDS', 30) * 1000;
const CACHE_LIMIT = 1000;
type ValidToken = Omit<Extract<TokenCheck, { outcome: 'valid' }>, 'outcome'>;
const cache = new Map<string, ValidToken & { expiresAt: number }>();

export async function checkToken(token: string): Promise<TokenCheck> {
  if (!TOKEN_SHAPE.test(token)) return { outcome: 'malformed' };
  const hash = hashToken(token);
  const now = Date.now();
  const hit = cache.get(hash);
  if (hit && hit.expiresAt > now) return { outcome: 'valid', accountId: hit.accountId, scope: hit.scope, keyId: hit.keyId, sites: hit.sites };

  const key = await findApiKey(hash);
  if (!key || key.revoked_at !== undefined) {
    cache.delete(hash);
    return { outcome: key ? 'revoked' : 'unknown' };
  }
  const valid: ValidToken = {
    accountId: key.account_id,
    scope: isTokenScope(key.scope) ? key.scope : undefined,
    keyId: key.key_id,
    sites: Array.isArray(key.sites) ? key.sites : undefined,
  };
  if (cacheMilliseconds > 0) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(hash, { ...valid, expiresAt: now + cacheMilliseconds });
  }
  return { outcome: 'valid', ...valid };
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

/** At most this many sites per token, as a promotion's site_ids. */
const MAX_TOKEN_SITES = 100;

/**
 * The sites a till's token may be bound to: only with scope pos (a core token serves no till; an
 * all token could do everything else anyway, so binding it would look safer than it is), 1 to
 * MAX_TOKEN_SITES distinct site ids, each as a transaction's site_id is (1 to 128 characters)
 * and printable (no control, format or separator character, which could forge a row of `list`).
 */
export function tokenSitesProblem(scope: TokenScope, sites: readonly string[]): string | undefined {
  if (scope !== 'pos') {
    return `binds a till's token to sites: only with --scope pos (a token of scope ${scope} is not a till's; issue a pos token for the till)`;
  }
  if (sites.length === 0) return 'needs at least one site (leave --site out for a till that serves every site)';
  if (sites.length > MAX_TOKEN_SITES) return `may be given at most ${MAX_TOKEN_SITES} times (got ${sites.length})`;
  for (const site of sites) {
    const length = [...site].length;
    if (length < 1 || length > 128) return `must be a site_id of 1 to 128 characters (got ${length}: ${JSON.stringify(site)})`;
    if (/[\p{C}\p{Zl}\p{Zp}]/u.test(site))
      return `must be printable text: no tabs, line breaks or other control or format characters (got ${JSON.stringify(site)})`;
  }
  const repeated = sites.find((site, i) => sites.indexOf(site) !== i);
  if (repeated !== undefined) return `names ${JSON.stringify(repeated)} twice`;
  return undefined;
}

/**
 * Creates a token for an account and stores its hash with its scope (and, for a till bound to
 * sites, those sites). The token is returned once, to be shown once; nothing can recover it later.
 */
export async function issueToken(
  accountId: number,
  name: string,
  scope: TokenScope,
  { sites, now = new Date() }: { sites?: readonly string[]; now?: Date } = {},
): Promise<{ token: string; key: ApiKey }> {
  const problem = tokenNameProblem(name);
  if (problem) throw new Error(`Token name ${problem}`);
  if (!isTokenScope(scope)) throw new Error(`Token scope must be one of ${TOKEN_SCOPES.join(', ')}`);
  const sitesProblem = sites === undefined ? undefined : tokenSitesProblem(scope, sites);
  if (sitesProblem) throw new Error(`Token --site ${sitesProblem}`);
  const token = newToken();
  const key: ApiKey = {
    token_hash: hashToken(token),
    key_id: `key_${randomBytes(8).toString('hex')}`,
    account_id: accountId,
    name,
    scope,
    ...(sites !== undefined ? { sites: [...sites] } : {}),
    created_at: now.toISOString(),
  };
  await saveApiKey(key);
  return { token, key };
}
