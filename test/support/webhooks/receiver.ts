import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A real receiver on 127.0.0.1 that verifies every delivery with `standardwebhooks`, as an
 * integrator's would. Each path is one endpoint: the test tells it the endpoint's secret(s) and
 * how to answer (a status, a hang, a Retry-After).
 */
interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly json: any;
  readonly at: number;
  /** When the answer was sent or the connection closed (unset while open). */
  closedAt?: number;
  /** The secrets whose signature verified (every one the receiver was told, in order). */
  readonly verifiedWith: string[];
}

/** A status (after `delayMs`: a slow receiver), or no answer at all. */
type Behaviour = { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The secrets to verify a path's deliveries with; a delivery no secret verifies is recorded with verifiedWith []. */
  secrets(path: string, secrets: string[]): void;
  /** How the path answers from now on (default 204). */
  behave(path: string, behaviour: Behaviour): void;
  on(path: string): Received[];
  /** Requests received and not answered yet (held by a delay or a hang), now. */
  inFlight(): number;
  /** The most requests held open by 'hang' at once, since the start or the last reset. */
  peakHanging(): number;
  /** Starts counting the peak again from the requests held open now. */
  resetPeakHanging(): void;
  /** The most requests to `path` open at once (received, not yet answered), since the start or the last reset. */
  peakOpen(path: string): number;
  /** Starts counting the path's peak again from its requests open now. */
  resetPeakOpen(path: string): void;
  /** Waits until `path` has received `count` requests (or fails after `timeoutMs`). */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** The most of `requests` open at once (each from its arrival to its close; one still open counts as open now). */
export function peakOpenAmong(requests: readonly Received[]): number {
  const edges = requests.flatMap((r) => [
    [r.at, 1],
    [r.closedAt ?? Number.POSITIVE_INFINITY, -1],
  ]);
  // At equal times a close before an arrival: a request answered as the next arrives is not two at once.
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let peak = 0;
  for (const [, change] of edges) peak = Math.max(peak, (open += change!));
  return peak;
}

/**
 * The requests of `requests` whose attempt began after `afterMs` (epoch milliseconds): its
 * `webhook-timestamp` (whole seconds of the attempt's start, before the sender's reads) is later.
 * Such an attempt read the account's endpoints after that moment (the sender's Query is
 * consistent), so it saw whatever had been written to them before.
 */
export const attemptsBegunAfter = (requests: readonly Received[], afterMs: number): Received[] =>
  requests.filter((r) => Number(r.headers['webhook-timestamp']) * 1000 > afterMs);

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const secrets = new Map<string, string[]>();
  const behaviours = new Map<string, Behaviour>();
  const hanging = new Set<ServerResponse>();
  let peakHanging = 0;
  const delayed = new Set<ServerResponse>();
  const open = new Map<string, number>();
  const peaks = new Map<string, number>();

  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = request.url ?? '/';
    const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
    const verifiedWith = (secrets.get(path) ?? []).filter((secret) => {
      try {
        new Webhook(secret).verify(body, headers);
        return true;
      } catch {
        return false;
      }
    });
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const one: Received = { path, headers, body, json, at: Date.now(), verifiedWith };
    received.push(one);
    open.set(path, (open.get(path) ?? 0) + 1);
    peaks.set(path, Math.max(peaks.get(path) ?? 0, open.get(path)!));
    response.on('close', () => {
      open.set(path, open.get(path)! - 1);
      one.closedAt = Date.now();
    });
    const behaviour = behaviours.get(path) ?? { status: 204 };
    if (behaviour === 'hang') {
      hanging.add(response);
      peakHanging = Math.max(peakHanging, hanging.size);
      response.on('close', () => hanging.delete(response));
      return;
    }
    if (behaviour.delayMs) {
      delayed.add(response); // destroyed with the receiver if still waiting
      await new Promise((r) => setTimeout(r, behaviour.delayMs));
      delayed.delete(response);
      if (response.destroyed) return;
    }
    response.writeHead(behaviour.status, behaviour.headers ?? {});
    response.end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const on = (path: string) => received.filter((r) => r.path === path);
  return {
    url,
    received,
    secrets: (path, list) => void secrets.set(path, list),
    behave: (path, behaviour) => void behaviours.set(path, behaviour),
    on,
    inFlight: () => delayed.size + hanging.size,
    peakHanging: () => peakHanging,
    resetPeakHanging: () => void (peakHanging = hanging.size),
    peakOpen: (path) => peaks.get(path) ?? 0,
    resetPeakOpen: (path) => void peaks.set(path, open.get(path) ?? 0),
    async waitFor(path, count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (on(path).length < count) {
        if (Date.now() > deadline) throw new Error(`${path} received ${on(path).length} of ${count} deliveries in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return on(path);
    },
    close: () =>
      new Promise<void>((done) => {
        for (const response of [...hanging, ...delayed]) response.destroy();
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
