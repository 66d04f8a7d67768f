import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findCodeGenerator } from '#data/code-generators';
import { presentCodeGenerator } from './presenters.ts';
import idPath from '#http/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getCodeGenerator', params: idPath }).handler(async (event, context) => {
  const { id } = event.params;
  const generator = await findCodeGenerator(context.accountId, id);
  if (!generator) throw notFound(`Code generator ${id} not found`);
  return ok({ code_generator: presentCodeGenerator(generator) });
});
