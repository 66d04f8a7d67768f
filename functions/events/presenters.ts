import type { EventRecord } from '#data/events';

export function presentEvent(event: EventRecord) {
  return { id: event.id, type: event.type, resource_id: event.resource_id, created_at: event.created_at };
}
