import { api } from '#http/chain';
import { acknowledged } from '#http/reply';
import { notFound } from '#http/errors';
import { writeTogether } from '#data/transactions';
import { countOneLess, deleteEndpointItem } from '#data/webhook-endpoints';
import { deleteSecret } from '#data/webhook-secrets';
import idPath from '#http/schemas/idPath.generated';

/**
 * The endpoint, its secret and one off the account's count, together. Its pending deliveries
 * find no endpoint when they come due and end `failed` without a request (nothing more is sent).
 * `200` with a one-space body, as an acknowledged event answers.
 */
export const handler = api<null, { id: number }>({ host: 'core', operationId: 'deleteWebhookEndpoint', params: idPath }).handler(async (event, context) => {
  const { id } = event.params;
  const result = await writeTogether([deleteEndpointItem(context.accountId, id), countOneLess(context.accountId), deleteSecret(context.accountId, id)]);
  if (result.outcome !== 'written') throw notFound(`Webhook endpoint ${id} not found`);
  return acknowledged();
});
