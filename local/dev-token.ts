import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hashToken, issueToken } from '../functions/http/tokens.ts';
import { findApiKey } from '../functions/data/api-keys.ts';

/**
 * Makes sure the development account has a working token of scope `all` (both hosts), kept in a git-ignored file (mode
 * 0600) so that it is never printed. Returns what it did, for the start banner.
 */
export async function ensureDevelopmentToken(file: string, accountId: number): Promise<'kept' | 'created'> {
  const existing = existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
  if (existing) {
    const key = await findApiKey(hashToken(existing));
    if (key && key.revoked_at === undefined && key.account_id === accountId && key.scope === 'all') return 'kept';
  }
  const { token } = await issueToken(accountId, 'local-development', 'all');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return 'created';
}
