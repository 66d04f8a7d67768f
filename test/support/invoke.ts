import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { expect } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { recordExample } from './openapi.ts';
import { toProxyEvent } from '../../local/server.ts';

export interface TestRequest {
  readonly headers?: Record<string, string | string[]>;
  readonly body?: string | object;
  /** What `context.getRemainingTimeInMillis()` answers at the start (default 10 000, the function timeout). */
  readonly remainingMs?: number;
}

/**
 * Calls a handler in-process with the proxy event API Gateway would send, for handler tests
 * that need no HTTP. `operationId` picks the route; `path` fills its parameters.
 */
export async function invoke(
  handler: unknown,
  operationId: string,
  path: string,
  request: TestRequest = {},
): Promise<APIGatewayProxyResult & { headers: Record<string, string> }> {
  const route = routes.find((r) => r.operationId === operationId)!;
  const rawHeaders: string[] = [];
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    for (const one of [value].flat()) rawHeaders.push(name, one);
  }
  const body = request.body === undefined ? '' : typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
  const event = toProxyEvent({
    route,
    target: path,
    rawHeaders,
    body: Buffer.from(body),
    requestId: randomUUID(),
    sourceIp: '127.0.0.1',
    protocol: 'HTTP/1.1',
  });
  const deadline = Date.now() + (request.remainingMs ?? 10_000);
  const context = { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) } as Context;
  const result = (await (handler as (e: unknown, c: Context) => Promise<APIGatewayProxyResult>)(event, context)) as APIGatewayProxyResult & {
    headers: Record<string, string>;
  };
  if (result.statusCode >= 400 && Object.keys(result.headers ?? {}).some((name) => name.toLowerCase() === 'etag')) {
    throw new Error(`${operationId} ${path} → ${result.statusCode} carries an ETag: errors must not`);
  }
  // The faults injected in-process are where the suite sees 500s and 503s: keep them as examples.
  if (result.statusCode >= 500) {
    recordExample(
      route.host,
      route.method,
      path,
      { status: result.statusCode, text: result.body },
      `Recorded from the test "${expect.getState().currentTestName ?? 'unknown'}"`,
    );
  }
  return result;
}
