/**
 * The part of Newman's programmatic API the contract run uses (newman ships no types, and
 * @types/newman would be one more dependency for these few lines).
 */
declare module 'newman' {
  import type { EventEmitter } from 'node:events';

  interface RunOptions {
    collection: object;
    environment?: { values: { key: string; value: string }[] };
    reporters?: string[];
    reporter?: Record<string, unknown>;
    timeoutRequest?: number;
    timeoutScript?: number;
    ignoreRedirects?: boolean;
    insecure?: false;
  }

  interface Tracker {
    total: number;
    failed: number;
  }

  export interface RunFailure {
    error: { name: string; message: string; test?: string };
    at: string;
    source?: { name: string };
  }

  export interface RunSummary {
    run: {
      stats: { requests: Tracker; assertions: Tracker; prerequestScripts: Tracker; testScripts: Tracker };
      failures: RunFailure[];
      timings: { started: number; completed: number };
    };
  }

  export interface RequestEvent {
    request: { url: { getHost(): string; toString(): string } };
  }

  interface Run extends EventEmitter {
    on(event: 'request', listener: (error: Error | null, args: RequestEvent) => void): this;
  }

  function run(options: RunOptions, callback: (error: Error | null, summary: RunSummary) => void): Run;

  const newman: { run: typeof run };
  export default newman;
}
