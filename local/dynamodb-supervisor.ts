import { startDynamoDbLocal, type RunningDynamoDb } from './dynamodb.ts';

/**
 * Keeps DynamoDB Local running for `npm start`: when the Java process dies (a crash, an
 * out-of-memory kill, someone's `kill`), it is started again on the same port and the same data
 * directory after a bounded back-off, and the servers, whose clients only know the endpoint,
 * carry on. Every exit and restart is logged.
 *
 * The back-off grows while DynamoDB Local keeps dying soon after it starts (0.5 s, 1 s, 2 s, 5 s,
 * then 10 s at most) and starts over once it has stayed up for a minute. If it cannot be started
 * at all `maxFailedStarts` times in a row (Java gone, port taken), the supervisor gives up.
 */
export interface SupervisorOptions {
  readonly port: number;
  readonly dataDirectory?: string;
  readonly log: (line: string) => void;
  /** Runs after every start, the first included (e.g. create missing tables). */
  readonly onStart?: (endpoint: string) => Promise<void>;
  /** Called once when restarting is hopeless; the supervisor does nothing more. */
  readonly onGiveUp?: (error: Error) => void;
  readonly backoffMs?: readonly number[];
  /** Uptime after which a death counts as a new incident, and the back-off starts over. */
  readonly stableAfterMs?: number;
  readonly maxFailedStarts?: number;
  /** A death is not handled before this grace: a Ctrl-C reaches DynamoDB Local and `npm start` together. */
  readonly graceMs?: number;
  /** Starts one DynamoDB Local process (a stand-in in the supervisor's own tests). */
  readonly startDynamoDb?: typeof startDynamoDbLocal;
}

export interface SupervisedDynamoDb {
  readonly endpoint: string;
  /** The process running now. */
  current(): RunningDynamoDb;
  /** How many times DynamoDB Local was started again. */
  restarts(): number;
  /** Stops supervising, then stops DynamoDB Local. */
  stop(): Promise<void>;
}

export const DEFAULT_BACKOFF_MS = [500, 1000, 2000, 5000, 10_000] as const;
const DEFAULT_STABLE_AFTER_MS = 60_000;
export const DEFAULT_MAX_FAILED_STARTS = 5;

export async function superviseDynamoDbLocal(options: SupervisorOptions): Promise<SupervisedDynamoDb> {
  const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  const stableAfterMs = options.stableAfterMs ?? DEFAULT_STABLE_AFTER_MS;
  const maxFailedStarts = options.maxFailedStarts ?? DEFAULT_MAX_FAILED_STARTS;
  const graceMs = options.graceMs ?? 500;
  const { port, dataDirectory, log } = options;
  const where = `port ${port}${dataDirectory ? `, data in ${dataDirectory}` : ', in memory'}`;

  const start = async () => {
    const running = await (options.startDynamoDb ?? startDynamoDbLocal)({ port, ...(dataDirectory ? { dataDirectory } : {}) });
    await options.onStart?.(running.endpoint);
    return running;
  };

  let current = await start();
  let startedAt = Date.now();
  let restarts = 0;
  let quickDeaths = 0;
  let stopping = false;
  log(`DynamoDB Local is running (${where}, pid ${current.pid}).`);

  const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

  const watch = (instance: RunningDynamoDb) => {
    void instance.exited.then(async (code) => {
      await pause(graceMs);
      if (stopping) return;
      const uptime = Date.now() - startedAt;
      // A death after a stable run is the first of a new incident: the back-off starts over at its
      // first step (0 here would read backoff[-1], undefined: a restart with no pause at all).
      quickDeaths = uptime >= stableAfterMs ? 1 : quickDeaths + 1;
      log(`DynamoDB Local (pid ${instance.pid}) exited unexpectedly (code ${code}) after ${Math.round(uptime / 1000)} s; restarting it (${where}).`);
      for (let failed = 0; !stopping; ) {
        const delay = backoff[Math.min(quickDeaths - 1 + failed, backoff.length - 1)]!;
        log(`DynamoDB Local: restart in ${delay} ms …`);
        await pause(delay);
        if (stopping) return;
        try {
          current = await start();
          startedAt = Date.now();
          restarts += 1;
          log(`DynamoDB Local restarted (${where}, pid ${current.pid}); requests are served again.`);
          watch(current);
          return;
        } catch (error) {
          failed += 1;
          log(`DynamoDB Local did not restart (${failed} of ${maxFailedStarts}): ${(error as Error).message}`);
          if (failed >= maxFailedStarts) {
            options.onGiveUp?.(error as Error);
            return;
          }
        }
      }
    });
  };
  watch(current);

  return {
    endpoint: current.endpoint,
    current: () => current,
    restarts: () => restarts,
    stop: async () => {
      stopping = true;
      await current.stop();
    },
  };
}
