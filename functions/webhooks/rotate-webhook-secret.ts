import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { writeTogether } from '#data/transactions';
import { endpointExists, findEndpoint } from '#data/webhook-endpoints';
import { rotateSecret } from '#data/webhook-secrets';
import { presentWebhookEndpoint } from './presenters.ts';
import emptyObject from '#http/schemas/emptyObject.generated';
import idPath from '#http/schemas/idPath.generated';
import { newSecret } from './rules.ts';

/**
 * A new secret, shown in this answer only. The replaced one keeps signing beside it for 24 hours
 * (two signatures in webhook-signature), so a receiver can switch without losing a delivery.
 * The old secret is moved by DynamoDB itself (`SET previous_secret = secret`): this function
 * never reads a secret.
 */
export const handler = api<Record<string, never>, { id: number }>({
  host: 'core',
  operationId: 'rotateWebhookSecret',
  params: idPath,
  body: emptyObject,
}).handler(async (event, context) => {
  const { id } = event.params;
  const endpoint = await findEndpoint(context.accountId, id);
  if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
  const secret = newSecret();
  const result = await writeTogether([endpointExists(context.accountId, id), rotateSecret(context.accountId, id, secret, new Date())]);
  if (result.outcome !== 'written') throw notFound(`Webhook endpoint ${id} not found`);
  return ok({ webhook_endpoint: presentWebhookEndpoint(endpoint, secret) });
});
