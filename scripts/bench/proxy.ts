import { Agent, createServer, request as httpRequest, type Server } from 'node:http';

/**
 * A counting proxy in front of DynamoDB Local: every request tillgate makes passes through it, so
 * what is counted is what went over the wire, whatever the code believes it sends.
 *
 * For each request it notes the operation (`X-Amz-Target`), the JSON body as the client sent it,
 * the response as DynamoDB answered, and the capacity consumed: it adds
 * `"ReturnConsumedCapacity":"INDEXES"` to each body (DynamoDB Local honours it, GSIs included) and
 * reads `ConsumedCapacity` from the answer before handing it on unchanged otherwise. It also
 * times each call and notes an answer that came after its client had gone (the SDK's time-out).
 */
export interface WireCall {
  /** `GetItem`, `TransactWriteItems`, … (the part of X-Amz-Target after the dot). */
  readonly target: string;
  /** The request body as the client sent it (before the capacity option was added). */
  readonly request: Record<string, unknown>;
  readonly status: number;
  readonly response: Record<string, unknown>;
  /** Capacity units of the call, table and indexes together (0 when none reported). */
  readonly capacityUnits: number;
  /** From the request's arrival to DynamoDB's answer, ms. */
  readonly ms?: number;
  /** The client closed the connection before the answer came (its time-out): DynamoDB may have done the work all the same. */
  readonly abandoned?: boolean;
}

export interface CountingProxy {
  readonly endpoint: string;
  /** Calls seen since the last `take()` (or since start), in arrival order; empties the log. */
  take(): WireCall[];
  close(): Promise<void>;
}

const READ_TARGETS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
export const isRead = (target: string) => READ_TARGETS.has(target);

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let log: WireCall[] = [];

  const server: Server = createServer((incoming, outgoing) => {
    const arrived = performance.now();
    let abandoned = false;
    outgoing.on('close', () => (abandoned ||= !outgoing.writableFinished));
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const operation =
        String(incoming.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      let sent: Record<string, unknown> = {};
      let body = raw;
      try {
        sent = JSON.parse(raw) as Record<string, unknown>;
        body = JSON.stringify({ ...sent, ReturnConsumedCapacity: 'INDEXES' });
      } catch {
        // Not JSON: forwarded as is, counted all the same.
      }
      // The SDK signs its requests; DynamoDB Local does not check signatures, so a changed body passes.
      const headers = { ...incoming.headers, host: target.host, 'content-length': String(Buffer.byteLength(body)) };
      const forward = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers, agent }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => parts.push(chunk));
        answer.on('end', () => {
          const payload = Buffer.concat(parts);
          let response: Record<string, unknown> = {};
          try {
            response = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
          } catch {
            // leave empty
          }
          if (operation) {
            const ms = performance.now() - arrived;
            const gone = abandoned || outgoing.destroyed;
            log.push({ target: operation, request: sent, status: answer.statusCode ?? 0, response, capacityUnits: capacityOf(response), ms, abandoned: gone });
          }
          const { 'content-length': _, 'transfer-encoding': __, ...rest } = answer.headers;
          outgoing.writeHead(answer.statusCode ?? 502, { ...rest, 'content-length': String(payload.length) });
          outgoing.end(payload);
        });
      });
      forward.on('error', (error) => {
        outgoing.writeHead(502);
        outgoing.end(String(error));
      });
      forward.end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    take: () => {
      const taken = log;
      log = [];
      return taken;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      agent.destroy();
    },
  };
}

/** `ConsumedCapacity` is one object, or a list (one per table) for transactions and batches. */
function capacityOf(response: Record<string, unknown>): number {
  const consumed = response.ConsumedCapacity as { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;
  if (!consumed) return 0;
  return (Array.isArray(consumed) ? consumed : [consumed]).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}
