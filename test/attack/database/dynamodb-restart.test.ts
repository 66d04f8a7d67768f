import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../support/http.ts';
import { npmStart, type NpmStart } from '../../support/npm-start.ts';

/**
 * `npm start` outlives its database: the real local/start.ts runs in a process of its own (its
 * own ports, data directory and token file: test/support/npm-start.ts); its DynamoDB Local is
 * killed with SIGKILL, like a crash, and the same `npm start` restarts it on the same port and
 * data and serves again.
 */
let directory: string;
let start: NpmStart | undefined;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'tillgate-start-'));
  start = await npmStart(directory, { tablePrefix: 'restart-' });
}, 200_000);

afterAll(async () => {
  await start?.stop();
  rmSync(directory, { recursive: true, force: true });
});

const voidIt = (id: string) =>
  call(start!.api, 'pos', 'POST', '/v2.0/voided_transactions', { token: start!.token, body: { transaction: { site_id: 'S-1', pos_transaction_id: id } } });

describe('npm start when DynamoDB Local dies', () => {
  it('restarts it on the same port and data, logs it, and serves again', async () => {
    const before = await voidIt('before-the-crash');
    expect(before.status).toBe(200);
    const [, pid] = await start!.waitForLine(/DynamoDB Local is running \(port \d+, data in .*, pid (\d+)\)/);

    process.kill(Number(pid), 'SIGKILL');
    const [, newPid] = await start!.waitForLine(/DynamoDB Local restarted \(port \d+, data in .*, pid (\d+)\); requests are served again\./);
    expect(newPid).not.toBe(pid);
    expect(start!.lines.some((line) => new RegExp(`DynamoDB Local \\(pid ${pid}\\) exited unexpectedly`).test(line))).toBe(true);
    expect(start!.alive()).toBe(true);

    // The same service process answers again, on the same data: the development token, stored
    // when npm start began, still authenticates. (The last write before a SIGKILL is not
    // checked: DynamoDB Local can lose it, see scripts/dynamodb-local-durability.ts.)
    const after = await voidIt('after-the-crash');
    expect(after.status, after.text).toBe(200);
    expect(after.json.transaction.errors).toEqual([]);
  }, 200_000);
});
