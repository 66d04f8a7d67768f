import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findEndpoint } from '#data/webhook-endpoints';
import { presentWebhookEndpoint } from './presenters.ts';
import idPath from '#http/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getWebhookEndpoint', params: idPath }).handler(async (event, context) => {
  const { id } = event.params;
  const endpoint = await findEndpoint(context.accountId, id);
  if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
  return ok({ webhook_endpoint: presentWebhookEndpoint(endpoint) });
});
