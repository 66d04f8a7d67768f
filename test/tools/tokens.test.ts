import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { hashToken } from '../../functions/http/tokens.ts';
import { findApiKey, saveApiKey } from '../../functions/data/api-keys.ts';
import { tableName } from '../../functions/runtime/config.ts';

/**
 * The token tool (`npm run tokens`) against the test DynamoDB: scopes are required at create,
 * shown by list, settable on an existing key; names are printable text of at most 64 characters.
 */
const run = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await promisify(execFile)('node_modules/.bin/tsx', ['scripts/tokens.ts', ...args, '--table', tableName('apiKeys')], {
      env: { ...process.env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};

describe('npm run tokens', { timeout: 60_000 }, () => {
  it('create requires --scope, and stores the one given with the hash', async () => {
    const account = String(randomInt(1_000_000, 2 ** 40));
    const missing = await run('create', '--account', account, '--name', 'Till 3');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--scope must be one of pos, core, all');
    const wrong = await run('create', '--account', account, '--scope', 'admin', '--name', 'Till 3');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--scope must be one of pos, core, all, got "admin"');

    const created = await run('create', '--account', account, '--scope', 'pos', '--name', 'Till 3');
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain('scope pos');
    expect(await findApiKey(hashToken(token))).toMatchObject({ account_id: Number(account), name: 'Till 3', scope: 'pos' });
  });

  it.each([
    ['a tab', 'Till\t3', 'must be printable text'],
    ['a line break', 'Till 3\nkey_forged\t1\tall', 'must be printable text'],
    ['a bidirectional override', 'Till \u202e3', 'must be printable text'],
    ['65 characters', 'x'.repeat(65), 'must be 1 to 64 characters (got 65)'],
    ['nothing', '', 'must be 1 to 64 characters (got 0)'],
    ['leading white space', ' Till', 'must not start or end with white space'],
  ])('refuses a name with %s', async (_, name, message) => {
    const result = await run('create', '--account', '7', '--scope', 'pos', '--name', name);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--name ${message}`);
    expect(result.stdout).toBe('');
  });

  it('accepts 64 characters of any script', async () => {
    const result = await run('create', '--account', '7', '--scope', 'core', '--name', 'Kassé 3 — 東京'.padEnd(64, 'é'));
    expect(result.code).toBe(0);
  });

  it('list shows each scope ("-" for a key written before scopes), and a stored name that breaks the rule quoted; scope sets one', async () => {
    const accountId = randomInt(1_000_000, 2 ** 40);
    const keyId = `key_${randomInt(1e9, 9e9)}legacy`;
    await saveApiKey({
      token_hash: hashToken(`legacy-${keyId}`),
      key_id: keyId,
      account_id: accountId,
      name: 'old\tname',
      created_at: new Date().toISOString(),
    });

    const before = await run('list');
    expect(before.stdout.split('\n')[0]).toBe('key_id\taccount_id\tscope\tsites\tname\tcreated_at\trevoked_at');
    const row = before.stdout.split('\n').find((line) => line.startsWith(`${keyId}\t`))!;
    expect(row.split('\t').slice(0, 5)).toEqual([keyId, String(accountId), '-', '*', '"old\\tname"']);
    expect(before.stderr).toMatch(/\d+ key\(s\) have no scope/);

    const scoped = await run('scope', keyId, 'core');
    expect(scoped.code).toBe(0);
    expect(scoped.stdout).toContain(`Key ${keyId} (account ${accountId}, "old\tname") now has scope core.`);
    expect((await findApiKey(hashToken(`legacy-${keyId}`)))!.scope).toBe('core');
    expect((await run('scope', keyId, 'everything')).code).toBe(2);
    expect((await run('scope', 'key_none', 'pos')).stderr).toContain('no key key_none');
  });
});

/**
 * Tills bound to their sites: `--site`, repeatable, with scope pos only; `list` shows the sites.
 * Would catch: sites dropped or not stored, a core/all token bound to sites, a site that forges a
 * row of `list`, a bound key's scope widened.
 */
describe('npm run tokens -- create --site', { timeout: 60_000 }, () => {
  it('binds a pos token to the sites given, as given; list shows them, and * for a token that serves every site', async () => {
    const account = String(randomInt(1_000_000, 2 ** 40));
    const created = await run('create', '--account', account, '--scope', 'pos', '--name', 'Till 3', '--site', 'S-0042', '--site', 'Main, Street 1');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('scope pos, sites "S-0042", "Main, Street 1"');
    const token = created.stdout.trim();
    expect(await findApiKey(hashToken(token))).toMatchObject({ scope: 'pos', sites: ['S-0042', 'Main, Street 1'] });
    const keyId = /Created (key_[0-9a-f]{16})/.exec(created.stderr)![1]!;

    const unbound = await run('create', '--account', account, '--scope', 'pos', '--name', 'Till 4');
    expect(unbound.stderr).toContain('("Till 4", scope pos) in');
    expect((await findApiKey(hashToken(unbound.stdout.trim())))!.sites).toBeUndefined();
    const unboundId = /Created (key_[0-9a-f]{16})/.exec(unbound.stderr)![1]!;

    const rows = (await run('list')).stdout.split('\n');
    expect(
      rows
        .find((line) => line.startsWith(`${keyId}\t`))!
        .split('\t')
        .slice(2, 5),
    ).toEqual(['pos', '["S-0042","Main, Street 1"]', 'Till 3']);
    expect(
      rows
        .find((line) => line.startsWith(`${unboundId}\t`))!
        .split('\t')
        .slice(2, 5),
    ).toEqual(['pos', '*', 'Till 4']);

    // A bound key stays a till's: widening its scope would let it do what sites do not bind.
    const widened = await run('scope', keyId, 'all');
    expect(widened.code).toBe(2);
    expect(widened.stderr).toContain(`${keyId} is bound to sites ["S-0042","Main, Street 1"]: only scope pos serves a till's sites`);
    expect((await findApiKey(hashToken(token)))!.scope).toBe('pos');
  });

  it.each([
    ['scope core', ['--scope', 'core', '--site', 'S-1'], "--site binds a till's token to sites: only with --scope pos (a token of scope core is not a till's"],
    ['scope all', ['--scope', 'all', '--site', 'S-1'], "--site binds a till's token to sites: only with --scope pos (a token of scope all is not a till's"],
    ['an empty site', ['--scope', 'pos', '--site', ''], '--site must be a site_id of 1 to 128 characters (got 0: "")'],
    ['129 characters', ['--scope', 'pos', '--site', 'x'.repeat(129)], '--site must be a site_id of 1 to 128 characters (got 129'],
    ['a line break', ['--scope', 'pos', '--site', 'S-1\nkey_forged'], '--site must be printable text'],
    ['a site twice', ['--scope', 'pos', '--site', 'S-1', '--site', 'S-1'], '--site names "S-1" twice'],
  ])('refuses %s, storing nothing', async (_, args, message) => {
    const result = await run('create', '--account', '7', '--name', 'Till 5', ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });
});

describe('npm run tokens -- revoke: the cache notice', { timeout: 60_000 }, () => {
  const withCache = async (seconds: string | undefined, ...args: string[]) => {
    const env = { ...process.env };
    if (seconds === undefined) delete env.TOKEN_CACHE_SECONDS;
    else env.TOKEN_CACHE_SECONDS = seconds;
    try {
      const { stdout, stderr } = await promisify(execFile)('node_modules/.bin/tsx', ['scripts/tokens.ts', ...args, '--table', tableName('apiKeys')], { env });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const newKey = async () => {
    const created = await withCache('0', 'create', '--account', String(randomInt(1_000_000, 2 ** 40)), '--scope', 'pos', '--name', 'Till 9');
    return /Created (key_[0-9a-f]{16})/.exec(created.stderr)![1]!;
  };

  it.each([
    ['unset (npm start has no token cache)', undefined],
    ['0', '0'],
  ])('locally with TOKEN_CACHE_SECONDS %s: no warning of a cache there is not', async (_, seconds) => {
    const revoked = await withCache(seconds, 'revoke', await newKey());
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^Revoked key_/);
    expect(revoked.stderr).not.toMatch(/cache|TOKEN_CACHE_SECONDS|30/i);
  });

  it('locally with TOKEN_CACHE_SECONDS=12 (npm start given it too): warns of those 12 s', async () => {
    const revoked = await withCache('12', 'revoke', await newKey());
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toContain('npm start, run with TOKEN_CACHE_SECONDS=12 as in this shell, may accept the token for up to 12 s more.');
  });
});
