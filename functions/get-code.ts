import { api, ok } from '#commons/api';
import { notFound } from '#commons/errors';
import { findIssuedCode } from '#commons/data/codes';

/** A code this generator issued, typed in any case as a cashier may; spelled as issued. */
export const handler = api<null, { id: number; code: string }>({ host: 'core', operationId: 'getCode', path: 'codePath' }).handler(
  async (event, context) => {
    const { id, code } = event.params;
    const issued = await findIssuedCode(context.accountId, id, code);
    if (!issued) throw notFound(`Code ${code} was not issued by code generator ${id}`);
    return ok({ code: { code: issued.code, code_generator_id: issued.code_generator_id, issued_at: issued.issued_at } });
  },
);
