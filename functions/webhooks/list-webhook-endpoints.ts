import { api } from '#http/chain';
import { ok } from '#http/reply';
import { listEndpoints } from '#data/webhook-endpoints';
import { pageBody, pageOf } from '#http/pagination';
import { presentWebhookEndpoint } from './presenters.ts';
import listQuery from '#http/schemas/listQuery.generated';

export const handler = api<null, null, { limit?: string; cursor?: string }>({
  host: 'core',
  operationId: 'listWebhookEndpoints',
  query: listQuery,
}).handler(async (event, context) => {
  const page = await pageOf(event.query, context.accountId, 'webhook_endpoints');
  const result = await listEndpoints(context.accountId, page.afterId, page.limit);
  return ok(await pageBody('webhook_endpoints', result, (endpoint) => presentWebhookEndpoint(endpoint), context.accountId, 'webhook_endpoints'));
});
