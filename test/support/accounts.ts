import { randomInt } from 'node:crypto';
import { issueToken, type TokenScope } from '../../functions/http/tokens.ts';

/** The accounts this test process made: its local stream reader takes only their events (local-webhooks.ts). */
export const accountsOfThisProcess = new Set<number>();

/**
 * A fresh account with a token (scope `all` unless asked), so tests sharing one database never
 * see each other's data.
 */
export async function newAccount(scope: TokenScope = 'all'): Promise<{ accountId: number; token: string; keyId: string }> {
  const accountId = randomInt(1_000_000, 2 ** 47);
  accountsOfThisProcess.add(accountId);
  const { token, key } = await issueToken(accountId, `test account ${accountId}`, scope);
  return { accountId, token, keyId: key.key_id };
}
