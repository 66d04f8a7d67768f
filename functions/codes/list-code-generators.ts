import { api } from '#http/chain';
import { ok } from '#http/reply';
import { listCodeGenerators } from '#data/code-generators';
import { pageBody, pageOf } from '#http/pagination';
import { presentCodeGenerator } from './presenters.ts';
import codeGeneratorListQuery from '#http/schemas/codeGeneratorListQuery.generated';

export const handler = api<null, null, { limit?: string; cursor?: string; store_id?: number }>({
  host: 'core',
  operationId: 'listCodeGenerators',
  query: codeGeneratorListQuery,
}).handler(async (event, context) => {
  const { store_id: storeId } = event.query;
  const filters = storeId === undefined ? 'code_generators' : `code_generators?store_id=${storeId}`;
  const page = await pageOf(event.query, context.accountId, filters);
  const result = await listCodeGenerators(context.accountId, { storeId, afterId: page.afterId, limit: page.limit });
  return ok(await pageBody('code_generators', result, presentCodeGenerator, context.accountId, filters));
});
