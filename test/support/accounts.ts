import { randomInt } from 'node:crypto';
import { issueToken } from '../../functions/commons/auth.ts';

/** A fresh account with a token, so tests sharing one database never see each other's data. */
export async function newAccount(): Promise<{ accountId: number; token: string; keyId: string }> {
  const accountId = randomInt(1_000_000, 2 ** 47);
  const { token, key } = await issueToken(accountId, `test account ${accountId}`);
  return { accountId, token, keyId: key.key_id };
}
