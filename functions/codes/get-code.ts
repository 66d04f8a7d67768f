import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findIssuedCode } from '#data/codes';
import { presentCode } from './presenters.ts';
import codePath from '#http/schemas/codePath.generated';

/**
 * A code this generator issued, typed in any case as a cashier may; spelled as issued, with the
 * redemption that holds it now (or nulls). Text that cannot be a code is turned away before any
 * read (an overlong key would make DynamoDB refuse it).
 */
export const handler = api<null, { id: number; code: string }>({ host: 'core', operationId: 'getCode', params: codePath }).handler(async (event, context) => {
  const { id, code } = event.params;
  const issued = await findIssuedCode(context.accountId, id, code);
  if (!issued) throw notFound(`Code ${code} was not issued by code generator ${id}`);
  return ok({ code: presentCode(issued) });
});
