import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { listDeliveries } from '#data/webhook-deliveries';
import { findEndpoint } from '#data/webhook-endpoints';
import { pageBody, pageOf } from '#http/pagination';
import { presentDelivery } from './presenters.ts';
import idPath from '#http/schemas/idPath.generated';
import listQuery from '#http/schemas/listQuery.generated';

export const handler = api<null, { id: number }, { limit?: string; cursor?: string }>({
  host: 'core',
  operationId: 'listWebhookDeliveries',
  params: idPath,
  query: listQuery,
}).handler(async (event, context) => {
  const { id } = event.params;
  const filters = `webhook_endpoints/${id}/deliveries`;
  const page = await pageOf(event.query, context.accountId, filters);
  if (!(await findEndpoint(context.accountId, id))) throw notFound(`Webhook endpoint ${id} not found`);
  const result = await listDeliveries(context.accountId, id, page.afterId, page.limit);
  const items = { items: result.items.map((delivery) => ({ ...delivery, id: delivery.event_id })), more: result.more };
  return ok(await pageBody('deliveries', items, presentDelivery, context.accountId, filters));
});
