import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../local/dynamodb.ts';

/**
 * scripts/webhook-receiver.mjs, the README's receiver: it waits for what it expects however long
 * the reader takes (no time-out of its own), and says how many it got when stopped.
 */
const SECRET = `whsec_${Buffer.from('a test secret of 32 bytes length').toString('base64')}`;

async function receiver(...args: string[]) {
  const port = await freePort();
  const child = spawn(process.execPath, ['scripts/webhook-receiver.mjs', '--port', String(port), ...args], {
    env: { ...process.env, WHSEC: SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  for (let i = 0; i < 100; i++) {
    // A connection only, no request: a request would be a (rejected) delivery.
    const up = await new Promise<boolean>((done) => {
      const socket = connect(port, '127.0.0.1', () => done(socket.end() !== undefined)).on('error', () => done(false));
    });
    if (up) break;
    await new Promise((done) => setTimeout(done, 50));
  }
  const deliver = async (id: string, type: string) => {
    const body = JSON.stringify({ type, timestamp: new Date().toISOString(), data: { resource_id: 'S-1/1' } });
    const headers = new Webhook(SECRET).sign(id, new Date(), body) as string;
    const response = await fetch(`http://127.0.0.1:${port}/hooks`, {
      method: 'POST',
      body,
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': headers,
        'content-type': 'application/json',
      },
    });
    return response.status;
  };
  return { child, exited, deliver, output: () => output };
}

describe('the webhook receiver of the README', () => {
  it('with --count and no --timeout, exits 0 once it has them, however late they come', async () => {
    const r = await receiver('--count', '2');
    expect(await r.deliver('1', 'transaction.voided')).toBe(204);
    await new Promise((done) => setTimeout(done, 1_500)); // any pause; nothing times it out
    expect(r.child.exitCode).toBeNull();
    expect(await r.deliver('2', 'codes.released')).toBe(204);
    expect(await r.exited).toBe(0);
    expect(r.output()).toBe('verified webhook-id 1: transaction.voided S-1/1\nverified webhook-id 2: codes.released S-1/1\n');
  });

  it('stopped before it has them, it says how many it got, and exits 1', async () => {
    const r = await receiver('--count', '2');
    expect(await r.deliver('1', 'transaction.voided')).toBe(204);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(1);
    expect(r.output()).toContain('webhook-receiver: stopped (SIGTERM) with 1 of 2 deliveries');
  });

  it('gives up only when told to: --timeout', async () => {
    const r = await receiver('--count', '2', '--timeout', '1');
    expect(await r.exited).toBe(1);
    expect(r.output()).toContain('webhook-receiver: 0 of 2 deliveries in 1 s (--timeout)');
  });

  it('has no default time-out in its source (a slow reader must not break the walkthrough)', async () => {
    const { readFileSync } = await import('node:fs');
    const source = readFileSync('scripts/webhook-receiver.mjs', 'utf8');
    expect(source).not.toMatch(/timeout: \{[^}]*default/);
  });
});
