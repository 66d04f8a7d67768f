import { api, ok } from '#commons/api';
import { notFound } from '#commons/errors';
import { writeTogether } from '#commons/data/transactions';
import { endpointExists, findEndpoint } from '#commons/data/webhook-endpoints';
import { rotateSecret } from '#commons/data/webhook-secrets';
import { presentWebhookEndpoint } from '#commons/presenters';
import emptyObject from '#commons/schemas/emptyObject.generated';
import idPath from '#commons/schemas/idPath.generated';
import { newSecret } from '#commons/webhooks';

/**
 * A new secret, shown in this answer only. The replaced one keeps signing beside it for 24 hours
 * (two signatures in webhook-signature), so a receiver can switch without losing a delivery.
 * The old secret is moved by DynamoDB itself (`SET previous_secret = secret`): this function
 * never reads a secret.
 */
export const handler = api<Record<string, never>, { id: number }>({
  host: 'core',
  operationId: 'rotateWebhookSecret',
  path: idPath,
  body: { schema: emptyObject, optional: true },
}).handler(async (event, context) => {
  const { id } = event.params;
  const endpoint = await findEndpoint(context.accountId, id);
  if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
  const secret = newSecret();
  const result = await writeTogether([endpointExists(context.accountId, id), rotateSecret(context.accountId, id, secret, new Date())]);
  if (result.outcome !== 'written') throw notFound(`Webhook endpoint ${id} not found`);
  return ok({ webhook_endpoint: presentWebhookEndpoint(endpoint, secret) });
});
