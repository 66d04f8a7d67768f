import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound, preconditionFailed, serviceUnavailable } from '#http/errors';
import { writeTogether } from '#data/transactions';
import { findEndpoint, updateEndpoint, type WebhookEndpoint } from '#data/webhook-endpoints';
import { ifMatchHolds, ifMatchOf, weakEtag } from '#http/etags';
import { presentWebhookEndpoint } from './presenters.ts';
import type { WebhookEndpointPatch } from '#http/schemas';
import idPath from '#http/schemas/idPath.generated';
import webhookEndpointPatch from '#http/schemas/webhookEndpointPatch.generated';
import { endpointFieldRules } from './endpoint-fields.ts';

const ATTEMPTS = 3;
const CHANGEABLE = ['url', 'event_types', 'description', 'status'] as const;

/**
 * url, event_types, description and status change (the schema answers 422 for anything else,
 * before anything is read). If-Match is compared with the current ETag, and the change written
 * conditioned on the endpoint being as read. Enabling an endpoint sets `enabled_at`: events
 * created before it are never sent to it (PRODUCT.md: events committed while it was disabled
 * stay unsent). No change, no write; no event either way.
 */
export const handler = api<Pick<WebhookEndpointPatch, (typeof CHANGEABLE)[number]>, { id: number }>({
  host: 'core',
  operationId: 'updateWebhookEndpoint',
  params: idPath,
  body: webhookEndpointPatch,
  bodyRules: endpointFieldRules,
}).handler(async (event, context) => {
  const ifMatch = ifMatchOf(event.headers);
  const { id } = event.params;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await findEndpoint(context.accountId, id);
    if (!current) throw notFound(`Webhook endpoint ${id} not found`);
    const currentBody = { webhook_endpoint: presentWebhookEndpoint(current) };
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, weakEtag(JSON.stringify(currentBody)))) {
      throw preconditionFailed('If-Match does not match the current ETag of this webhook endpoint');
    }
    const changed = CHANGEABLE.filter((key) => event.body[key] !== undefined && JSON.stringify(event.body[key]) !== JSON.stringify(current[key]));
    if (changed.length === 0) return ok(currentBody);

    const now = new Date(Math.max(Date.now(), Date.parse(current.updated_at) + 1));
    const next: WebhookEndpoint = { ...current, ...event.body, updated_at: now.toISOString() } as WebhookEndpoint;
    if (current.status !== 'enabled' && next.status === 'enabled') next.enabled_at = next.updated_at;
    const result = await writeTogether([updateEndpoint(current, next)]);
    if (result.outcome === 'written') return ok({ webhook_endpoint: presentWebhookEndpoint(next) });
  }
  throw serviceUnavailable();
});
