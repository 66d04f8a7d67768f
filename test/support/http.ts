import type { HostId } from '../../functions/routes.ts';
import type { LocalApi } from '../../local/server.ts';
import { checkAgainstOpenApi } from './openapi.ts';

export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: any;
}

export interface CallOptions {
  readonly token?: string;
  /** An object is sent as JSON with Content-Type application/json; a string as is. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Every response is checked against the OpenAPI document unless this is false. */
  readonly checkOpenApi?: boolean;
}

/** One HTTP request to a host of the running local API; the response is checked against the OpenAPI document. */
export async function call(api: LocalApi, host: HostId, method: string, path: string, options: CallOptions = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.token !== undefined) headers['X-Auth-Token'] = options.token;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  Object.assign(headers, options.headers);
  const response = await fetch(`${api.urls[host]}${path}`, { method, headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const result = { status: response.status, headers: response.headers, text, json };
  if (options.checkOpenApi !== false) checkAgainstOpenApi(host, method, path, result);
  return result;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const RFC3339_MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
