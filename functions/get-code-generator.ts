import { api, ok } from '#commons/api';
import { notFound } from '#commons/errors';
import { findCodeGenerator } from '#commons/data/code-generators';
import { presentCodeGenerator } from '#commons/presenters';
import idPath from '#commons/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getCodeGenerator', path: idPath }).handler(
  async (event, context) => {
    const { id } = event.params;
    const generator = await findCodeGenerator(context.accountId, id);
    if (!generator) throw notFound(`Code generator ${id} not found`);
    return ok({ code_generator: presentCodeGenerator(generator) });
  },
);
