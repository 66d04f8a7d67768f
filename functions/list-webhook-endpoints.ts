import { api, ok } from '#commons/api';
import { listEndpoints } from '#commons/data/webhook-endpoints';
import { pageBody, pageOf } from '#commons/pagination';
import { presentWebhookEndpoint } from '#commons/presenters';
import listQuery from '#commons/schemas/listQuery.generated';

export const handler = api<null, null, { limit?: string; cursor?: string }>({
  host: 'core',
  operationId: 'listWebhookEndpoints',
  query: listQuery,
}).handler(async (event, context) => {
  const page = pageOf(event.query, context.accountId, 'webhook_endpoints');
  const result = await listEndpoints(context.accountId, page.afterId, page.limit);
  return ok(pageBody('webhook_endpoints', result, (endpoint) => presentWebhookEndpoint(endpoint), context.accountId, 'webhook_endpoints'));
});
