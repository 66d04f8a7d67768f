import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureTables, freePort, startDynamoDbLocal, tableNamesWithPrefix } from '../../../local/dynamodb.ts';

/**
 * `npm start`'s database file holds the tokens' hashes and the webhook signing secrets: its data
 * directory is the owner's only (0700) and so is every file in it (0600), those DynamoDB Local
 * writes and those an earlier run left with wider modes.
 */
const directory = mkdtempSync(join(tmpdir(), 'tillgate-files-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;

describe("DynamoDB Local's data directory", () => {
  it('is 0700 with its files 0600, an older file made so too', async () => {
    const older = join(directory, 'left-by-an-older-run.db');
    writeFileSync(older, '');
    chmodSync(older, 0o644);
    chmodSync(directory, 0o755);
    const dynamodb = await startDynamoDbLocal({ port: await freePort(), dataDirectory: directory });
    try {
      await ensureTables(dynamodb.endpoint, tableNamesWithPrefix('files-'));
    } finally {
      await dynamodb.stop();
    }
    const files = readdirSync(directory);
    expect(files.some((file) => file.endsWith('.db') && file !== 'left-by-an-older-run.db')).toBe(true);
    expect(mode(directory).toString(8)).toBe('700');
    for (const file of files) expect(`${file} ${mode(join(directory, file)).toString(8)}`).toBe(`${file} 600`);
  }, 60_000);
});
