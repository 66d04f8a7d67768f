import type { CodeGenerator } from './data/code-generators.ts';
import type { CodeView } from './data/codes.ts';
import type { EventRecord } from './data/events.ts';
import type { WebhookDelivery } from './data/webhook-deliveries.ts';
import type { WebhookEndpoint } from './data/webhook-endpoints.ts';

/** The eleven fields of the seed, in its order. */
export function presentCodeGenerator(generator: CodeGenerator) {
  return {
    generation_type: generator.generation_type,
    buffer_type: generator.buffer_type,
    code_length: generator.code_length,
    description: generator.description,
    prefix: generator.prefix,
    store_id: generator.store_id,
    status: generator.status,
    id: generator.id,
    account_id: generator.account_id,
    created_at: generator.created_at,
    updated_at: generator.updated_at,
  };
}

export function presentEvent(event: EventRecord) {
  return { id: event.id, type: event.type, resource_id: event.resource_id, created_at: event.created_at };
}

/** A code as the back office sees it: as issued, and the redemption that holds it now, or nulls. */
export function presentCode(code: CodeView) {
  return {
    code: code.code,
    code_generator_id: code.code_generator_id,
    issued_at: code.issued_at,
    redeemed_at: code.redeemed_at ?? null,
    site_id: code.site_id ?? null,
    pos_transaction_id: code.pos_transaction_id ?? null,
  };
}

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
