import { api, ok } from '#commons/api';
import { notFound } from '#commons/errors';
import { findIssuedCode } from '#commons/data/codes';
import codePath from '#commons/schemas/codePath.generated';

const ISSUABLE = /^[A-Za-z0-9-]{1,48}$/;

/** A code this generator issued, typed in any case as a cashier may; spelled as issued. */
export const handler = api<null, { id: number; code: string }>({ host: 'core', operationId: 'getCode', path: codePath }).handler(
  async (event, context) => {
    const { id, code } = event.params;
    // Codes are A-Z, 0-9 and - (prefix up to 16, generated part up to 32): nothing else can have
    // been issued, and an overlong key would make DynamoDB refuse the read.
    const issued = ISSUABLE.test(code) ? await findIssuedCode(context.accountId, id, code) : undefined;
    if (!issued) throw notFound(`Code ${code} was not issued by code generator ${id}`);
    return ok({ code: { code: issued.code, code_generator_id: issued.code_generator_id, issued_at: issued.issued_at } });
  },
);
