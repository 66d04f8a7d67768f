import type { CodeGenerator } from './data/code-generators.ts';
import type { EventRecord } from './data/events.ts';

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
