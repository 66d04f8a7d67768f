import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../../local/dynamodb.ts';
import type { LocalApi } from '../../local/server.ts';

/**
 * The real `npm start` (local/start.ts) in a process of its own, as a developer's terminal runs
 * it: its own free ports, and everything it keeps under `directory` (DynamoDB Local's files, the
 * S3 server's, the token and key files), so that a second start on the same directory finds the
 * first one's data, as `npm start` does after a crash. For the tests that kill parts of it.
 *
 * It runs in a process group of its own (tsx, the node process that runs start.ts, and DynamoDB
 * Local's JVM, which start.ts spawns): `crash()` sends SIGKILL to all of them at once.
 */
export interface NpmStart {
  readonly api: LocalApi;
  /** Its DynamoDB Local, for a test to read what was written. */
  readonly dynamodbEndpoint: string;
  /** The development account's token (TILLGATE_DEV_TOKEN_FILE). */
  readonly token: string;
  /** Every line it printed so far, stdout and stderr. */
  readonly lines: readonly string[];
  /** Ms from the spawn to the banner's last line. */
  readonly startedInMs: number;
  /** The first line printed that matches, polled for until `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Whether start.ts (through tsx) still runs. */
  alive(): boolean;
  /** SIGKILL to every process of the stack at once, as a crash of the machine: nothing of it runs on. */
  crash(): Promise<void>;
  /** Ctrl-C's SIGTERM, and its exit waited for (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

const READY = 'Ctrl-C stops everything.';

/**
 * A port found free can be taken by another process before the stack listens on it (`Port N is
 * already in use`, or DynamoDB Local's `Address already in use`): started again on other ports,
 * up to 3 times.
 */
export async function npmStart(directory: string, options: { tablePrefix: string; env?: Readonly<Record<string, string>> }): Promise<NpmStart> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await npmStartOnce(directory, options);
    } catch (error) {
      if (attempt >= 3 || !/already in use/.test(String(error))) throw error;
    }
  }
}

async function npmStartOnce(directory: string, options: { tablePrefix: string; env?: Readonly<Record<string, string>> }): Promise<NpmStart> {
  const child: ChildProcess = spawn(join('node_modules', '.bin', 'tsx'), [join('local', 'start.ts')], {
    env: {
      ...process.env,
      // Not the test run's database: its own DynamoDB Local, on disk in `directory`.
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
      TABLE_PREFIX: options.tablePrefix,
      ...options.env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const spawnedAt = Date.now();
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => lines.push(line));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      /* already gone */
    }
  };

  const waitForLine = async (pattern: RegExp, timeoutMs = 150_000): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) return match;
      }
      if (!running()) throw new Error(`local/start.ts exited (${child.exitCode ?? child.signalCode}) with no line matching ${pattern}:\n${lines.join('\n')}`);
      if (Date.now() > deadline) throw new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${lines.join('\n')}`);
      await new Promise((done) => setTimeout(done, 50));
    }
  };
  const crash = async () => {
    signalGroup('SIGKILL');
    await exited;
  };
  const stop = async () => {
    if (!running()) {
      // start.ts itself may be gone while DynamoDB Local, in its group, is not.
      signalGroup('SIGKILL');
      return;
    }
    // tsx relays it to start.ts, which stops the servers and DynamoDB Local.
    child.kill('SIGTERM');
    const timer = setTimeout(() => signalGroup('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };

  try {
    await waitForLine(new RegExp(READY.replace('.', '\\.')));
    const [, core] = await waitForLine(/core host \(v1\.0\): (http:\/\/\S+)/, 0);
    const [, pos] = await waitForLine(/pos host {2}\(v2\.0\): (http:\/\/\S+)/, 0);
    const [, dynamodb] = await waitForLine(/DynamoDB: +(http:\/\/\S+)/, 0);
    return {
      api: { urls: { core: core!, pos: pos! }, close: async () => undefined },
      dynamodbEndpoint: dynamodb!,
      token: readFileSync(join(directory, 'dev-token'), 'utf8').trim(),
      lines,
      startedInMs: Date.now() - spawnedAt,
      waitForLine,
      alive: running,
      crash,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
