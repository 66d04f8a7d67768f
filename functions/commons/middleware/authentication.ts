import type { APIGatewayProxyEvent } from 'aws-lambda';
import { accountForToken } from '../auth.ts';
import { unauthorized } from '../errors.ts';
import type { ApiMiddleware } from '../api.ts';

/**
 * Hand-written: the token is ours (hashed, per account, revocable), so is its check. It runs
 * before the header normalizer, which would fold `X-Auth-Token` and `x-auth-token` into one key
 * and hide that two different tokens were sent; that request is ambiguous and refused.
 */
export function authentication(): ApiMiddleware {
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
      if (sent.size !== 1) throw unauthorized();
      const accountId = await accountForToken([...sent][0]);
      if (accountId === undefined) throw unauthorized();
      request.context.accountId = accountId;
    },
  };
}
