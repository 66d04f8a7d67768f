import { describe, expect, it } from 'vitest';
import type { RunningDynamoDb } from '../../../local/dynamodb.ts';
import { superviseDynamoDbLocal } from '../../../local/dynamodb-supervisor.ts';

/**
 * The supervisor of `npm start` (local/dynamodb-supervisor.ts) with a stand-in for DynamoDB Local
 * and small timings: which pause it takes before each restart, by how long the process ran.
 */
function fakeDynamoDb() {
  const started: { at: number; die: (code: number) => void }[] = [];
  const start = async ({ port }: { port: number }): Promise<RunningDynamoDb> => {
    let die!: (code: number | null) => void;
    const exited = new Promise<number | null>((done) => (die = done));
    started.push({ at: Date.now(), die });
    return {
      endpoint: `http://127.0.0.1:${port}`,
      pid: 1000 + started.length,
      exited,
      stop: async () => die(null),
      freeze: () => undefined,
      thaw: () => undefined,
    };
  };
  return { start, started };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function until(check: () => boolean, what: string, timeoutMs = 5_000) {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('the DynamoDB Local supervisor', () => {
  it('after a stable run, restarts with the first back-off step (never "restart in undefined ms" and no pause)', async () => {
    const fake = fakeDynamoDb();
    const lines: string[] = [];
    const backoffMs = [150, 300, 600];
    const supervisor = await superviseDynamoDbLocal({
      port: 8000,
      log: (line) => lines.push(line),
      startDynamoDb: fake.start,
      backoffMs,
      stableAfterMs: 200,
      graceMs: 0,
    });
    try {
      // A long, stable run, then a death: a new incident.
      await sleep(250);
      let diedAt = Date.now();
      fake.started[0]!.die(137);
      await until(() => fake.started.length === 2, 'the first restart');
      expect(lines.filter((line) => line.includes('restart in'))).toEqual(['DynamoDB Local: restart in 150 ms …']);
      expect(fake.started[1]!.at - diedAt).toBeGreaterThanOrEqual(140);

      // Dying again soon after that start: the next step.
      await sleep(20);
      diedAt = Date.now();
      fake.started[1]!.die(1);
      await until(() => fake.started.length === 3, 'the second restart');
      expect(lines.filter((line) => line.includes('restart in')).at(-1)).toBe('DynamoDB Local: restart in 300 ms …');
      expect(fake.started[2]!.at - diedAt).toBeGreaterThanOrEqual(290);

      // Stable again: the back-off starts over at its first step.
      await sleep(250);
      fake.started[2]!.die(137);
      await until(() => fake.started.length === 4, 'the third restart');
      expect(lines.filter((line) => line.includes('restart in')).at(-1)).toBe('DynamoDB Local: restart in 150 ms …');
      expect(lines.join('\n')).not.toContain('undefined');
      expect(supervisor.restarts()).toBe(3);
    } finally {
      await supervisor.stop();
    }
  });
});
