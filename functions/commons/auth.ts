import { createHash, randomBytes } from 'node:crypto';
import { numberFromEnv } from './config.ts';
import { findApiKey, saveApiKey, type ApiKey } from './data/api-keys.ts';

/**
 * Tokens are `tg_` followed by 32 random bytes in base64url (256 bits). Only their SHA-256 is
 * stored; a slow password hash buys nothing for secrets of that strength. The lookup is by hash
 * equality in DynamoDB, so no token is ever compared byte by byte in this process.
 */
const TOKEN_SHAPE = /^tg_[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return `tg_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Valid tokens are remembered for TOKEN_CACHE_SECONDS (default 30) per execution environment,
 * which saves a read per request; a revoked token therefore stops working within that bound.
 * Unknown or revoked tokens are never cached, so a new token works at once.
 */
const cacheMilliseconds = numberFromEnv('TOKEN_CACHE_SECONDS', 30) * 1000;
const CACHE_LIMIT = 1000;
const cache = new Map<string, { accountId: number; expiresAt: number }>();

export async function accountForToken(token: string | undefined): Promise<number | undefined> {
  if (token === undefined || !TOKEN_SHAPE.test(token)) return undefined;
  const hash = hashToken(token);
  const now = Date.now();
  const hit = cache.get(hash);
  if (hit && hit.expiresAt > now) return hit.accountId;

  const key = await findApiKey(hash);
  if (!key || key.revoked_at !== undefined) {
    cache.delete(hash);
    return undefined;
  }
  if (cacheMilliseconds > 0) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(hash, { accountId: key.account_id, expiresAt: now + cacheMilliseconds });
  }
  return key.account_id;
}

/**
 * Creates a token for an account and stores its hash. The token is returned once, to be shown
 * once; nothing can recover it later.
 */
export async function issueToken(accountId: number, name: string, now = new Date()): Promise<{ token: string; key: ApiKey }> {
  const token = newToken();
  const key: ApiKey = {
    token_hash: hashToken(token),
    key_id: `key_${randomBytes(8).toString('hex')}`,
    account_id: accountId,
    name,
    created_at: now.toISOString(),
  };
  await saveApiKey(key);
  return { token, key };
}
