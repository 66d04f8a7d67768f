import type { WebhookDelivery } from '#data/webhook-deliveries';
import type { WebhookEndpoint } from '#data/webhook-endpoints';

/** An endpoint as every read shows it: never its secret (create and rotate add it, once). */
export function presentWebhookEndpoint(endpoint: WebhookEndpoint, secret?: string) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    event_types: endpoint.event_types,
    description: endpoint.description,
    status: endpoint.status,
    ...(secret === undefined ? {} : { secret }),
    created_at: endpoint.created_at,
    updated_at: endpoint.updated_at,
  };
}

export function presentDelivery(delivery: WebhookDelivery) {
  return {
    event_id: delivery.event_id,
    event_type: delivery.event.type,
    status: delivery.status,
    attempts: delivery.attempts,
    last_attempt_at: delivery.last_attempt_at,
    last_response_status: delivery.last_response_status,
    next_attempt_at: delivery.status === 'pending' ? delivery.next_attempt_at : null,
  };
}
