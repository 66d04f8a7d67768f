import type { APIGatewayProxyEvent } from 'aws-lambda';
import { HttpError } from '#http/errors';
import { checkParameters } from '#http/validation';
import type { ApiMiddleware, ParameterOptions } from '#http/request';

/**
 * Path and query parameters through the same ajv validators as bodies (400 naming the
 * parameter). On a route with a query schema an unknown parameter (a typo such as `?limt=5`)
 * is an error rather than silently ignored, and a repeated one is ambiguous: both 400.
 */
export function parameters({ params, query }: ParameterOptions): ApiMiddleware {
  return {
    before: (request) => {
      const raw = request.event as unknown as APIGatewayProxyEvent;
      if (params) request.event.params = checkParameters(params, (raw.pathParameters ?? {}) as Record<string, string>, 'path');
      if (!query) return;
      for (const [name, list] of Object.entries(raw.multiValueQueryStringParameters ?? {})) {
        if ((list?.length ?? 0) > 1) throw new HttpError(400, 'bad_request', [{ message: `${name} must be given once`, field: name }]);
      }
      request.event.query = checkParameters(query, { ...raw.queryStringParameters } as Record<string, string>, 'query');
    },
  };
}
