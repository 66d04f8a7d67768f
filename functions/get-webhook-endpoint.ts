import { api, ok } from '#commons/api';
import { notFound } from '#commons/errors';
import { findEndpoint } from '#commons/data/webhook-endpoints';
import { presentWebhookEndpoint } from '#commons/presenters';
import idPath from '#commons/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getWebhookEndpoint', path: idPath }).handler(
  async (event, context) => {
    const { id } = event.params;
    const endpoint = await findEndpoint(context.accountId, id);
    if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
    return ok({ webhook_endpoint: presentWebhookEndpoint(endpoint) });
  },
);
