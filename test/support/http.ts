import { request } from 'node:http';
import type { HostId } from '../../functions/routes.ts';
import type { LocalApi } from '../../local/server.ts';
import { expect } from 'vitest';
import { checkAgainstOpenApi, recordExample } from './openapi.ts';

export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: any;
}

export interface CallOptions {
  readonly token?: string;
  /** An object is sent as JSON with Content-Type application/json; a string as is; a Buffer byte for byte. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Every response is checked against the OpenAPI document unless this is false. */
  readonly checkOpenApi?: boolean;
  /**
   * Send `path` as the request target byte for byte (no dot-segment resolution, as fetch and
   * every URL parser would do), the way a hostile or broken client can.
   */
  readonly rawTarget?: boolean;
}

/** One HTTP request to a host of the running local API; the response is checked against the OpenAPI document. */
export async function call(api: LocalApi, host: HostId, method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.token !== undefined) headers['X-Auth-Token'] = options.token;
  let body: string | Buffer | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  Object.assign(headers, options.headers);
  const response = options.rawTarget
    ? await rawRequest(api.urls[host], method, path, headers, body)
    : await fetch(`${api.urls[host]}${path}`, { method, headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const result = { status: response.status, headers: response.headers, text, json };
  // PRODUCT.md: a weak ETag on successful JSON bodies only, never on an error (every response of
  // the suite passes here).
  if (result.status >= 400 && result.headers.get('etag') !== null) {
    throw new Error(`${method} ${path} → ${result.status} carries an ETag (${result.headers.get('etag')}): errors must not`);
  }
  if (options.checkOpenApi !== false) {
    checkAgainstOpenApi(host, method, path, result);
    recordExample(host, method, path, result, `Recorded from the test "${expect.getState().currentTestName ?? 'unknown'}"`);
  }
  return result;
}

/** node:http with the target as given: Node sends `path` as is. */
function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string | Buffer) {
  const { hostname, port } = new URL(baseUrl);
  return new Promise<{ status: number; headers: Headers; text: () => Promise<string> }>((done, fail) => {
    const outgoing = request({ hostname, port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      res.on('end', () => {
        const received = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of [value ?? []].flat()) received.append(name, one);
        }
        const text = Buffer.concat(chunks).toString('utf8');
        done({ status: res.statusCode ?? 0, headers: received, text: async () => text });
      });
    });
    outgoing.on('error', fail);
    outgoing.end(body);
  });
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const RFC3339_MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
