import type { APIGatewayProxyEvent } from 'aws-lambda';

/**
 * A promotion code is worth money: no log line holds one. Request log lines (host-response.ts and
 * the local server's gateway lines) carry `loggablePath` instead of the path as sent; the stage's
 * access log carries `$context.resourcePath` (infra/constructs/host-api.ts).
 *
 * Path parameters whose values may appear in a log line: ids, which are worth nothing without a
 * token. Every other parameter (a promotion code is worth money) is logged as its `{name}`, so a
 * new route's parameter is kept out of the logs unless it is added here.
 */
const LOGGED_PATH_PARAMETERS = new Set(['id', 'event_id']);
const LOGGABLE_VALUE = /^[1-9][0-9]{0,15}$/;

/**
 * The path of the request log line: the route's resource path with the ids filled in, e.g.
 * `/v1.0/codegen/7/codes/{code}`. Never `event.path`, which holds whatever the client sent.
 */
export function loggablePath(event: Pick<APIGatewayProxyEvent, 'resource' | 'pathParameters'>): string {
  const parameters = event.pathParameters ?? {};
  return (event.resource ?? '').replace(/\{(\w+)\}/g, (placeholder, name: string) => {
    const value = parameters[name];
    return LOGGED_PATH_PARAMETERS.has(name) && value !== undefined && LOGGABLE_VALUE.test(value) ? value : placeholder;
  });
}
