import { expect } from 'vitest';
import type { HostId } from '../../functions/routes.ts';
import type { LocalApi } from '../../local/server.ts';
import { createTillgate, type RetryOptions, type Tillgate } from '../../client/index.ts';
import type { HttpResponse } from './http.ts';
import { checkAgainstOpenApi, recordExample } from './openapi.ts';

export type { CoreBody, CoreQuery, PosBody } from '../../client/index.ts';

/**
 * The typed client (client/index.ts) as the suite uses it: every answer it gets, retries
 * included, is checked against the OpenAPI document and recorded as an example, exactly as
 * `call()` (./http.ts) does for raw requests.
 */
export function checkedFetch(api: LocalApi, send: (request: Request) => Promise<Response> = (request) => fetch(request)) {
  const hostOf = (url: URL) => (Object.keys(api.urls) as HostId[]).find((host) => new URL(api.urls[host]).origin === url.origin);
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const host = hostOf(url);
    if (!host) throw new Error(`${request.method} ${request.url}: not a host of this local API`);
    const path = `${url.pathname}${url.search}`;
    const response = await send(request);
    const text = await response.clone().text();
    // PRODUCT.md: a weak ETag on successful JSON bodies only, never on an error.
    if (response.status >= 400 && response.headers.get('etag') !== null) {
      throw new Error(`${request.method} ${path} → ${response.status} carries an ETag (${response.headers.get('etag')}): errors must not`);
    }
    const checked = { status: response.status, headers: response.headers, text };
    checkAgainstOpenApi(host, request.method, path, checked);
    recordExample(host, request.method, path, checked, `Recorded from the test "${expect.getState().currentTestName ?? 'unknown'}"`);
    return response;
  };
}

export interface TestClientOptions {
  /** Below the check: how each request is really sent (default: fetch). Tests inject faults here. */
  readonly send?: (request: Request) => Promise<Response>;
  readonly retry?: RetryOptions;
}

/** Both hosts' typed clients for one token on the test's local API; retries do not really wait. */
export function testClient(api: LocalApi, token: string, options: TestClientOptions = {}): Tillgate {
  return createTillgate({
    coreUrl: api.urls.core,
    posUrl: api.urls.pos,
    token,
    fetch: checkedFetch(api, options.send),
    retry: { sleep: async () => undefined, ...options.retry },
  });
}

/** A typed answer of the client, and the response as `call()` gives it (what was received, before the client's middleware). */
export interface ClientResponse<A> extends HttpResponse {
  readonly answer: A;
}

/**
 * One request through the typed client, for the tests' helpers that send valid requests: the
 * request is typed by the documents, the response checked against them, and the result is what
 * `call()` returns (status, headers and the body's text as received, its JSON) with the typed
 * `answer` beside it. No retry, as `call()`. Requests a client would not send (malformed,
 * hostile) go through `call()`.
 */
export async function send<A extends { status: number; response: Response }>(
  api: LocalApi,
  token: string,
  request: (tillgate: Tillgate) => Promise<A>,
): Promise<ClientResponse<A>> {
  let received: { status: number; headers: Headers; text: string } | undefined;
  const checked = checkedFetch(api);
  const tillgate = createTillgate({
    coreUrl: api.urls.core,
    posUrl: api.urls.pos,
    token,
    fetch: async (outgoing) => {
      const response = await checked(outgoing);
      received = { status: response.status, headers: response.headers, text: await response.clone().text() };
      return response;
    },
    retry: { retries: 0 },
  });
  const answer = await request(tillgate);
  if (!received) throw new Error('the client sent nothing');
  let json: unknown;
  try {
    json = JSON.parse(received.text);
  } catch {
    json = undefined;
  }
  return { ...received, json, answer };
}
