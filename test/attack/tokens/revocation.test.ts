import { readFileSync } from 'node:fs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { hashToken, newToken } from '../../../functions/http/tokens.ts';
import { saveApiKey } from '../../../functions/data/api-keys.ts';
import { newAccount } from '../../support/accounts.ts';
import { invoke } from '../../support/invoke.ts';

/**
 * A revoked token stops working within TOKEN_CACHE_SECONDS, the bound docs/operations.md states. The
 * cache is per function instance and read at load time, so each test loads the handler afresh
 * with the setting it needs (the suite's default is 0).
 */
const defaultSeconds = process.env.TOKEN_CACHE_SECONDS;
afterEach(() => {
  vi.useRealTimers();
  if (defaultSeconds === undefined) delete process.env.TOKEN_CACHE_SECONDS;
  else process.env.TOKEN_CACHE_SECONDS = defaultSeconds;
});

async function getEventWithCache(seconds: string | undefined) {
  vi.resetModules();
  if (seconds === undefined) delete process.env.TOKEN_CACHE_SECONDS;
  else process.env.TOKEN_CACHE_SECONDS = seconds;
  const { handler } = await import('../../../functions/events/get-event.ts');
  // 404 (no such event) means the token was accepted; 401 that it was refused.
  return async (token: string) => (await invoke(handler, 'getEvent', '/v1.0/events/1', { headers: { 'X-Auth-Token': token } })).statusCode;
}

const revoke = (token: string) =>
  documents.send(
    new UpdateCommand({
      TableName: tableName('apiKeys'),
      Key: { token_hash: hashToken(token) },
      UpdateExpression: 'SET revoked_at = :now',
      ExpressionAttributeValues: { ':now': new Date().toISOString() },
    }),
  );

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('revoking a token', () => {
  it('with TOKEN_CACHE_SECONDS=0 (local stack): the next request is refused', async () => {
    const request = await getEventWithCache('0');
    const { token } = await newAccount();
    expect(await request(token)).toBe(404);
    await revoke(token);
    expect(await request(token)).toBe(401);
  });

  it('with TOKEN_CACHE_SECONDS=1: still accepted inside the bound, refused once it has passed', async () => {
    const request = await getEventWithCache('1');
    const { token } = await newAccount();
    // The token is cached at some moment while the first request runs: between these two.
    const firstSent = Date.now();
    expect(await request(token)).toBe(404);
    const firstAnswered = Date.now();

    await revoke(token);
    // Judged by when each request was sent, not by how long the machine took to answer it.
    const answers: { sent: number; status: number }[] = [];
    while (Date.now() - firstAnswered < 1600) {
      const sent = Date.now();
      answers.push({ sent, status: await request(token) });
      await sleep(50);
    }
    // Remembered within the stated bound, refused once it has passed.
    expect(answers.filter((a) => a.sent < firstSent + 1000).map((a) => a.status)).toEqual(answers.filter((a) => a.sent < firstSent + 1000).map(() => 404));
    expect(answers.filter((a) => a.sent > firstAnswered + 1000).map((a) => a.status)).toEqual(
      answers.filter((a) => a.sent > firstAnswered + 1000).map(() => 401),
    );
    expect(answers.some((a) => a.sent < firstSent + 1000)).toBe(true);
    expect(answers.some((a) => a.sent > firstAnswered + 1000)).toBe(true);
  });

  it('a new token works at once even with a cache: unknown tokens are never remembered', async () => {
    const request = await getEventWithCache('30');
    const token = newToken();
    expect(await request(token)).toBe(401);
    await saveApiKey({
      token_hash: hashToken(token),
      key_id: 'key_fresh',
      account_id: 424242,
      name: 'fresh',
      scope: 'all',
      created_at: new Date().toISOString(),
    });
    expect(await request(token)).toBe(404);
  });

  it('with the AWS default, a revoked token stops working within the bound docs/operations.md states', async () => {
    const page = readFileSync('docs/operations.md', 'utf8');
    const stated = /revoked token stops working within (\d+) seconds/i.exec(page);
    expect(stated, 'docs/operations.md states the revocation bound').not.toBeNull();
    const bound = Number(stated![1]);

    const request = await getEventWithCache(undefined);
    vi.useFakeTimers({ toFake: ['Date'] });
    const { token } = await newAccount();
    expect(await request(token)).toBe(404);
    await revoke(token);

    vi.setSystemTime(Date.now() + (bound - 1) * 1000);
    expect(await request(token)).toBe(404);
    vi.setSystemTime(Date.now() + 1001);
    expect(await request(token)).toBe(401);
  });
});
