import { api, ok } from '#commons/api';
import { listCodeGenerators } from '#commons/data/code-generators';
import { pageBody, pageOf } from '#commons/pagination';
import { presentCodeGenerator } from '#commons/presenters';
import codeGeneratorListQuery from '#commons/schemas/codeGeneratorListQuery.generated';

export const handler = api<null, null, { limit?: string; cursor?: string; store_id?: number }>({
  host: 'core',
  operationId: 'listCodeGenerators',
  query: codeGeneratorListQuery,
}).handler(async (event, context) => {
  const { store_id: storeId } = event.query;
  const filters = storeId === undefined ? 'code_generators' : `code_generators?store_id=${storeId}`;
  const page = pageOf(event.query, context.accountId, filters);
  const result = await listCodeGenerators(context.accountId, { storeId, afterId: page.afterId, limit: page.limit });
  return ok(pageBody('code_generators', result, presentCodeGenerator, context.accountId, filters));
});
