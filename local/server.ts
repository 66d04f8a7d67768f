import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { hosts, routes, type HostId, type Route } from '../functions/routes.ts';
import { loggablePath } from '../functions/http/loggable-path.ts';
import {
  gatewayError,
  gatewayErrorBody,
  HEADER_LIMITS,
  HEADERS_TOO_LARGE,
  METHOD_NOT_ALLOWED,
  methodsByPath,
  wafAnswerBody,
  type GatewayError,
} from '../infra/gateway-errors.ts';
import { runInvocation } from './invocation.ts';

/**
 * The local stand-in for API Gateway: one HTTP server per host, each turning a request into the
 * REST API proxy event (payload v1) that Lambda hands the same handler in AWS, and the handler's
 * result back into a response. Requests API Gateway itself would refuse (no route, body over its
 * limit, a known path with a method it does not serve) get the host's JSON error shape, as the
 * stack's gateway responses and mock methods give them.
 *
 * Like API Gateway: the path is routed exactly as sent (no dot-segment resolution, no merging of
 * slashes: `//v1.0/events/1` and `/v1.0/events/1/../2` are no route), and every body reaches the
 * function base64-encoded with `isBase64Encoded: true` (the stack sets `binaryMediaTypes: ['*\/*']`),
 * so the function sees the bytes the client sent.
 */
type LambdaHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type HandlerLoader = (route: Route) => Promise<LambdaHandler>;

export interface LocalApi {
  readonly urls: Record<HostId, string>;
  close(): Promise<void>;
}

/** API Gateway's own payload limit for REST APIs. */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** The stack's function timeout; LOCAL_FUNCTION_TIMEOUT_MS lets load tests on a slow machine allow more. */
const functionTimeoutMs = () => Number(process.env.LOCAL_FUNCTION_TIMEOUT_MS ?? 10_000);

/** Handlers from the TypeScript sources (run under tsx or vitest). */
export const sourceHandlers: HandlerLoader = async (route) => (await import(pathToFileURL(resolve(route.entry)).href)).handler as LambdaHandler;

/** Handlers from the bundles `cdk synth` built: what is deployed. */
export function bundledHandlers(bundles: Record<string, string>): HandlerLoader {
  return async (route) => {
    const file = bundles[route.operationId];
    if (!file) throw new Error(`No bundle for ${route.operationId}: run cdk synth first`);
    return (await import(pathToFileURL(file).href)).handler as LambdaHandler;
  };
}

/**
 * `lazy`: each route's handler is loaded at its first request (before its time-out starts, as a
 * Lambda's cold start is), not all at start. For tests: a test file touches a few routes, and a
 * bundle is a whole function (about 1 MB to parse), so loading every route's bundle took each
 * end-to-end file 5 to 10 s. `npm start` loads them all at once, so a broken handler stops it.
 */
export async function startLocalApi(options: {
  ports: Record<HostId, number>;
  loadHandler: HandlerLoader;
  log?: (line: string) => void;
  lazy?: boolean;
}): Promise<LocalApi> {
  const log = options.log ?? ((line) => process.stdout.write(`${line}\n`));
  const handlers = new Map<Route, () => Promise<LambdaHandler>>();
  for (const route of routes) {
    let loaded = options.lazy ? undefined : options.loadHandler(route);
    handlers.set(route, () => (loaded ??= options.loadHandler(route)));
  }
  await Promise.all(routes.map((route) => (options.lazy ? undefined : handlers.get(route)!())));

  // Filled once every server listens: a 404 names the other host's URL (see otherHostHint).
  const urlOf: Partial<Record<HostId, string>> = {};
  const servers = await Promise.all(
    (Object.keys(hosts) as HostId[]).map(async (host) => {
      const server = createServer((request, response) => {
        serve(host, request, response, handlers, log, urlOf).catch((error) => {
          log(JSON.stringify({ level: 'ERROR', message: 'local server failure', error: String(error?.stack ?? error) }));
          if (!response.headersSent) sendGatewayError(response, host, gatewayError('DEFAULT_5XX'), randomUUID(), 502);
          else response.destroy();
        });
      });
      // Keep-alive longer than clients' pools so connections are not cut under them.
      server.keepAliveTimeout = 65_000;
      // Headers past Node's own limit (16 KiB) never reach serve(): answered as the stage's WAF
      // answers headers it cannot inspect whole (see headersTooLarge), not with Node's bare 431.
      server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
        if (error.code === 'HPE_HEADER_OVERFLOW' && socket.writable) {
          const payload = wafAnswerBody(host, HEADERS_TOO_LARGE);
          socket.end(
            `HTTP/1.1 ${HEADERS_TOO_LARGE.statusCode} Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n` +
              `X-Request-Id: ${randomUUID()}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${payload}`,
          );
        } else socket.destroy(error);
      });
      await new Promise<void>((done, fail) => {
        server.once('error', fail);
        server.listen(options.ports[host], '127.0.0.1', () => done());
      });
      return [host, server] as const;
    }),
  );

  const urls = Object.fromEntries(servers.map(([host, server]) => [host, `http://127.0.0.1:${(server.address() as { port: number }).port}`])) as Record<
    HostId,
    string
  >;
  Object.assign(urlOf, urls);

  return {
    urls,
    close: async () => {
      await Promise.all(
        servers.map(
          ([, server]: readonly [HostId, Server]) =>
            new Promise<void>((done) => {
              server.close(() => done());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}

async function serve(
  host: HostId,
  request: IncomingMessage,
  response: ServerResponse,
  handlers: Map<Route, () => Promise<LambdaHandler>>,
  log: (line: string) => void,
  urlOf: Partial<Record<HostId, string>> = {},
): Promise<void> {
  const target = splitTarget(request.url ?? '/');
  const gatewayRequestId = randomUUID();
  if (headersTooLarge(request.rawHeaders)) {
    // The stage's WAF refuses these before API Gateway sees them (infra/constructs/token-rate-limit.ts).
    request.resume();
    const payload = wafAnswerBody(host, HEADERS_TOO_LARGE);
    response.writeHead(HEADERS_TOO_LARGE.statusCode, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(payload)),
      'X-Request-Id': gatewayRequestId,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    });
    response.end(payload);
    log(
      JSON.stringify({
        level: 'INFO',
        message: 'gateway',
        request_id: gatewayRequestId,
        method: request.method,
        path: null,
        status: HEADERS_TOO_LARGE.statusCode,
      }),
    );
    return;
  }
  const match = matchRoute(host, request.method ?? 'GET', target.path);
  const body = await readBody(request, GATEWAY_MAX_BODY_BYTES);

  if (!match || body === 'too-large') {
    // Logged as the route's resource path with ids only (see loggablePath), never the path as
    // sent: it may hold a promotion code. An unknown path is logged as null.
    const known = match ?? matchPath(host, target.path)[0];
    const path = known ? loggablePath({ resource: known.route.path, pathParameters: known.pathParameters }) : null;
    const allow = known && !match ? methodsByPath(host).get(known.route.path) : undefined;
    let status: number;
    if (body === 'too-large' || !allow) {
      const error = gatewayError(body === 'too-large' ? 'REQUEST_TOO_LARGE' : 'MISSING_AUTHENTICATION_TOKEN');
      const hint = body === 'too-large' ? undefined : otherHostHint(host, request.method ?? 'GET', target.path, urlOf);
      sendGatewayError(response, host, hint ? { ...error, message: `${error.message}: ${hint}` } : error, gatewayRequestId);
      status = error.statusCode ?? 500;
    } else {
      const message = METHOD_NOT_ALLOWED.message(request.method ?? '', allow);
      sendGatewayError(response, host, { ...METHOD_NOT_ALLOWED, type: 'METHOD_NOT_ALLOWED', message }, gatewayRequestId, 405, { Allow: allow.join(', ') });
      status = 405;
    }
    log(JSON.stringify({ level: 'INFO', message: 'gateway', request_id: gatewayRequestId, method: request.method, path, status }));
    return;
  }

  const event = toProxyEvent({
    route: match.route,
    target: request.url ?? '/',
    rawHeaders: request.rawHeaders,
    body,
    requestId: gatewayRequestId,
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    protocol: `HTTP/${request.httpVersion}`,
  });
  const handler = await handlers.get(match.route)!();
  const deadline = Date.now() + functionTimeoutMs();
  const context = {
    awsRequestId: randomUUID(),
    functionName: `tillgate-local-${match.route.operationId}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:tillgate-local-${match.route.operationId}`,
    memoryLimitInMB: '256',
    logGroupName: `/aws/lambda/tillgate-local-${match.route.operationId}`,
    logStreamName: 'local',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  } satisfies Context;

  const result = await runInvocation(handler, event, context);
  const payload = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  const headers: Record<string, string | string[]> = { ...(result.multiValueHeaders as Record<string, string[]>) };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  // A 304 has no content, and a Content-Length on it would describe the 200's (RFC 9110 §8.6).
  if (result.statusCode !== 304) headers['Content-Length'] = String(payload.length);
  response.writeHead(result.statusCode, headers);
  response.end(request.method === 'HEAD' ? undefined : payload);
}

/**
 * More headers, or more bytes of them (names and values), than the stage's WAF can inspect whole:
 * a token past them would pass WAF uncounted, so WAF refuses the request, and so does this server.
 */
function headersTooLarge(rawHeaders: readonly string[]): boolean {
  if (rawHeaders.length / 2 > HEADER_LIMITS.count) return true;
  let bytes = 0;
  for (const part of rawHeaders) bytes += Buffer.byteLength(part);
  return bytes > HEADER_LIMITS.bytes;
}

/**
 * Why a path is no route here when it is the other host's: its version prefix, and its route
 * when one matches (named by its template, never by the path as sent, which may hold a code).
 * Only the local server says it: in AWS the 404 is a gateway response, one fixed text per API.
 */
function otherHostHint(host: HostId, method: string, path: string, urlOf: Partial<Record<HostId, string>> = {}): string | undefined {
  const other = (Object.keys(hosts) as HostId[]).find(
    (id) => id !== host && (path === hosts[id].versionPrefix || path.startsWith(`${hosts[id].versionPrefix}/`)),
  );
  if (!other) return undefined;
  const where = `the ${other} host${urlOf[other] ? ` (${urlOf[other]} here)` : ''}, not the ${host} host`;
  const route = matchRoute(other, method, path);
  if (route) return `${method} ${route.route.path} is served by ${where}`;
  return `paths under ${hosts[other].versionPrefix} are served by ${where}`;
}

/**
 * The path and query of a request target as sent: split at the first `?`, nothing resolved or
 * decoded. An absolute-form target (`http://host/path`) keeps only its path; anything else that
 * does not start with `/` (`*`) has a path no route matches.
 */
function splitTarget(target: string): { path: string; query: string } {
  const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
  const rest = absolute ? target.slice(absolute[0].length) || '/' : target;
  const mark = rest.indexOf('?');
  return mark === -1 ? { path: rest, query: '' } : { path: rest.slice(0, mark), query: rest.slice(mark + 1) };
}

export function matchRoute(host: HostId, method: string, pathname: string) {
  return matchPath(host, pathname, method)[0];
}

/**
 * The host's routes whose path template matches `pathname` (of `method` only, when given): a
 * path that matches routes of other methods only is a known path (405 with Allow).
 */
function matchPath(host: HostId, pathname: string, method?: string) {
  const segments = pathname.split('/');
  const found: { route: Route; pathParameters: Record<string, string> }[] = [];
  for (const route of routes) {
    if (route.host !== host || (method !== undefined && route.method !== method)) continue;
    const template = route.path.split('/');
    if (template.length !== segments.length) continue;
    const pathParameters: Record<string, string> = Object.create(null);
    const matches = template.every((part, i) => {
      const actual = segments[i]!;
      if (part.startsWith('{') && part.endsWith('}')) {
        if (actual === '') return false;
        pathParameters[part.slice(1, -1)] = safeDecode(actual);
        return true;
      }
      return part === actual;
    });
    if (matches) found.push({ route, pathParameters });
  }
  return found;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit)
      tooLarge = true; // keep draining so the client sees the answer
    else chunks.push(chunk as Buffer);
  }
  return tooLarge ? 'too-large' : Buffer.concat(chunks);
}

export interface GatewayRequest {
  readonly route: Route;
  /** The request target as sent (`request.url` of Node): path and query, nothing resolved. */
  readonly target: string;
  /** Header names and values in arrival order, as Node's `rawHeaders`. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  readonly requestId: string;
  readonly sourceIp: string;
  readonly protocol: string;
}

/** The REST API (payload v1) proxy event API Gateway would build for this request. */
export function toProxyEvent({ route, target, rawHeaders, body, requestId, sourceIp, protocol }: GatewayRequest): APIGatewayProxyEvent {
  const { path, query: rawQuery } = splitTarget(target);
  const pathParameters = matchRoute(route.host, route.method, path)?.pathParameters ?? {};
  // Maps without a prototype: a header or parameter named `__proto__`, `constructor` or
  // `toString` is data, as in the JSON event Lambda receives, not a property of Object.prototype.
  const headers: Record<string, string> = Object.create(null);
  const multiValueHeaders: Record<string, string[]> = Object.create(null);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const value = rawHeaders[i + 1]!;
    headers[name] = value; // API Gateway keeps the last value of a repeated header
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query: Record<string, string> = Object.create(null);
  const multiQuery: Record<string, string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: route.path,
    path,
    httpMethod: route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    stageVariables: null,
    // With binaryMediaTypes */*, API Gateway passes every body as base64: the bytes as sent.
    body: body.length > 0 ? body.toString('base64') : null,
    isBase64Encoded: body.length > 0,
    requestContext: {
      accountId: '000000000000',
      apiId: `local-${route.host}`,
      authorizer: null,
      httpMethod: route.method,
      path: `/local${path}`,
      protocol,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.operationId,
      resourcePath: route.path,
      stage: 'local',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp,
        user: null,
        userAgent: headers['User-Agent'] ?? headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
}

/** An answer API Gateway gives without calling a function, as the stack's gateway responses shape it. */
function sendGatewayError(
  response: ServerResponse,
  host: HostId,
  error: GatewayError,
  requestId: string,
  status = error.statusCode ?? 500,
  headers: Record<string, string> = {},
) {
  const payload = gatewayErrorBody(host, error.message.replace('$context.requestId', requestId), error.messageId, requestId);
  response.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(payload)),
    'X-Request-Id': requestId,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  });
  response.end(payload);
}
