import type { APIGatewayProxyEvent } from 'aws-lambda';
import { checkToken, scopeAllows } from '#http/tokens';
import { forbidden, unauthorized } from '#http/errors';
import type { ApiMiddleware } from '#http/request';
import type { RouteScope } from '#functions/routes';

/**
 * Hand-written: the token is ours (hashed, per account, revocable, scoped), so is its check. It
 * runs before the header normalizer, which would fold `X-Auth-Token` and `x-auth-token` into one
 * key and hide that two different tokens were sent; that request is ambiguous and refused.
 * Right after the token, its scope against the one the route needs (routes.ts): 403.
 */
export function authentication({ scope: needed }: { readonly scope: RouteScope }): ApiMiddleware {
  return {
    before: async (request) => {
      const raw = request.event as unknown as APIGatewayProxyEvent;
      const sent = new Set<string>();
      for (const [name, values] of Object.entries(raw.multiValueHeaders ?? {})) {
        if (name.toLowerCase() === 'x-auth-token') for (const value of values ?? []) sent.add(value);
      }
      for (const [name, value] of Object.entries(raw.headers ?? {})) {
        if (name.toLowerCase() === 'x-auth-token' && value !== undefined) sent.add(value);
      }
      if (sent.size === 0 || (sent.size === 1 && [...sent][0] === '')) throw unauthorized('missing');
      if (sent.size > 1) throw unauthorized('ambiguous');
      const check = await checkToken([...sent][0]!);
      if (check.outcome !== 'valid') throw unauthorized(check.outcome);
      request.context.accountId = check.accountId;
      request.context.keyId = check.keyId;
      request.context.sites = check.sites;
      if (check.scope === undefined) {
        throw forbidden(
          'This token has no scope (it was issued before scopes existed) and may call nothing; ' + 'ask the operator to give it one, or for a new token',
        );
      }
      if (!scopeAllows(check.scope, needed)) {
        throw forbidden(`This token's scope is ${check.scope}; this operation needs a token of scope ${needed} or all`);
      }
    },
  };
}
