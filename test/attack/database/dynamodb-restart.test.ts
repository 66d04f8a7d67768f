import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../../local/server.ts';
import { freePort } from '../../../local/dynamodb.ts';
import { call } from '../../support/http.ts';

/**
 * `npm start` outlives its database: the real local/start.ts runs in a process of its own (its
 * own ports, data directory and token file); its DynamoDB Local is killed with SIGKILL, like a
 * crash, and the same `npm start` restarts it on the same port and data and serves again.
 */
let directory: string;
let start: ChildProcess;
const lines: string[] = [];
let api: LocalApi;
let token: string;

function waitForLine(pattern: RegExp, timeoutMs = 150_000): Promise<RegExpMatchArray> {
  return new Promise((done, fail) => {
    const check = () => {
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) {
          clearInterval(timer);
          done(match);
          return;
        }
      }
      if (Date.now() > deadline) {
        clearInterval(timer);
        fail(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${lines.join('\n')}`));
      }
    };
    const deadline = Date.now() + timeoutMs;
    const timer = setInterval(check, 50);
  });
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'tillgate-start-'));
  start = spawn(join('node_modules', '.bin', 'tsx'), [join('local', 'start.ts')], {
    env: {
      ...process.env,
      DYNAMODB_ENDPOINT: '',
      DYNAMODB_PORT: String(await freePort()),
      CORE_PORT: '0',
      POS_PORT: '0',
      S3_PORT: String(await freePort()),
      TILLGATE_S3_DATA_DIR: join(directory, 's3'),
      TILLGATE_DATA_DIR: join(directory, 'dynamodb'),
      TILLGATE_DEV_TOKEN_FILE: join(directory, 'dev-token'),
      TILLGATE_CUSTOMER_KEY_FILE: join(directory, 'customer-key'),
      TILLGATE_WEBHOOK_SECRETS_KEY_FILE: join(directory, 'webhook-secrets-key'),
      TILLGATE_CURSOR_KEY_FILE: join(directory, 'cursor-key'),
      TABLE_PREFIX: 'restart-',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [start.stdout!, start.stderr!]) createInterface({ input: stream }).on('line', (line) => lines.push(line));
  const [, core] = await waitForLine(/core host \(v1\.0\): (http:\/\/\S+)/);
  const [, pos] = await waitForLine(/pos host {2}\(v2\.0\): (http:\/\/\S+)/);
  api = { urls: { core: core!, pos: pos! }, close: async () => undefined };
  token = readFileSync(join(directory, 'dev-token'), 'utf8').trim();
}, 200_000);

afterAll(async () => {
  if (start && start.exitCode === null) {
    const exited = new Promise((done) => start.once('exit', done));
    start.kill('SIGTERM');
    await exited;
  }
  rmSync(directory, { recursive: true, force: true });
});

const voidIt = (id: string) =>
  call(api, 'pos', 'POST', '/v2.0/voided_transactions', { token, body: { transaction: { site_id: 'S-1', pos_transaction_id: id } } });

describe('npm start when DynamoDB Local dies', () => {
  it('restarts it on the same port and data, logs it, and serves again', async () => {
    const before = await voidIt('before-the-crash');
    expect(before.status).toBe(200);
    const [, pid] = await waitForLine(/DynamoDB Local is running \(port \d+, data in .*, pid (\d+)\)/);

    process.kill(Number(pid), 'SIGKILL');
    const [, newPid] = await waitForLine(/DynamoDB Local restarted \(port \d+, data in .*, pid (\d+)\); requests are served again\./);
    expect(newPid).not.toBe(pid);
    expect(lines.some((line) => new RegExp(`DynamoDB Local \\(pid ${pid}\\) exited unexpectedly`).test(line))).toBe(true);
    expect(start.exitCode).toBeNull();

    // The same service process answers again, on the same data: the development token, stored
    // when npm start began, still authenticates. (The last write before a SIGKILL is not
    // checked: DynamoDB Local can lose it, see scripts/dynamodb-local-durability.ts.)
    const after = await voidIt('after-the-crash');
    expect(after.status, after.text).toBe(200);
    expect(after.json.transaction.errors).toEqual([]);
  }, 200_000);
});
