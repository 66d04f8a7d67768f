import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { writeTogether } from '#data/transactions';
import { endpointExists, findEndpoint } from '#data/webhook-endpoints';
import { rotateSecret, sealSecret } from '#data/webhook-secrets';
import { presentWebhookEndpoint } from './presenters.ts';
import emptyObject from '#http/schemas/emptyObject.generated';
import idPath from '#http/schemas/idPath.generated';
import { newSecret } from './rules.ts';

/**
 * A new secret, shown in this answer only. The replaced one keeps signing beside it for 24 hours
 * (two signatures in webhook-signature), so a receiver can switch without losing a delivery.
 * The old secret is moved by DynamoDB itself (`SET previous_secret = secret`, still encrypted):
 * this function never reads a secret, and may encrypt but not decrypt. A secret stored before
 * encryption (text) is never moved: it is dropped (data/webhook-secrets.ts, rotateSecret), so the rotation leaves
 * nothing readable behind.
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
  const sealed = await sealSecret(context.accountId, id, secret);
  // An encrypted current secret (the rule), else a text one; a sender may encrypt it in between,
  // hence a few rounds. Both failing with the endpoint's check: it was deleted.
  for (let round = 0; round < 4; round++) {
    const stored = round % 2 === 0 ? 'sealed' : 'text';
    const result = await writeTogether([endpointExists(context.accountId, id), rotateSecret(context.accountId, id, sealed, new Date(), stored)]);
    if (result.outcome === 'written') return ok({ webhook_endpoint: presentWebhookEndpoint(endpoint, secret) });
    if (result.failed.has(0)) break;
  }
  throw notFound(`Webhook endpoint ${id} not found`);
});
