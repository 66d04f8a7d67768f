import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { hashToken, issueToken, newToken } from '../../../functions/http/tokens.ts';
import { findApiKey, saveApiKey } from '../../../functions/data/api-keys.ts';

/**
 * Issuing a token survives the SDK's retry of a write whose answer was lost: on a loaded machine
 * the first attempt can time out after DynamoDB wrote the key, and the retry then finds its own
 * item (`npm start` crashed on exactly this while making the development token). The fault is
 * injected by sending the first put twice, as the SDK's retry does.
 */
describe('a token write retried after DynamoDB took it', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('issues the token once and succeeds', async () => {
    const send = documents.send.bind(documents);
    let puts = 0;
    vi.spyOn(documents, 'send').mockImplementation((async (command: unknown) => {
      if (command instanceof PutCommand && puts++ === 0) {
        await send(command); // the attempt whose answer was lost
      }
      return send(command as never);
    }) as never);
    const { token, key } = await issueToken(987_654_321, 'retried', 'all');
    expect(puts).toBe(1);
    expect(await findApiKey(hashToken(token))).toEqual(key);
  });

  it('still refuses another key under an existing token hash', async () => {
    const token = newToken();
    const first = { token_hash: hashToken(token), key_id: 'key_first', account_id: 987_654_322, name: 'first', created_at: new Date().toISOString() };
    await saveApiKey(first);
    await expect(saveApiKey({ ...first, key_id: 'key_second', account_id: 987_654_323 })).rejects.toMatchObject({
      name: 'ConditionalCheckFailedException',
    });
    expect(await findApiKey(first.token_hash)).toEqual(first);
  });
});
