import type { CodeGenerator } from '#data/code-generators';
import type { CodeView } from '#data/codes';

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

/** A code as the back office sees it: as issued, and the redemption that holds it now, or nulls. */
export function presentCode(code: CodeView) {
  return {
    code: code.code,
    code_generator_id: code.code_generator_id,
    issued_at: code.issued_at,
    redeemed_at: code.redeemed_at ?? null,
    site_id: code.site_id ?? null,
    pos_transaction_id: code.pos_transaction_id ?? null,
    discount_amount: code.discount_amount ?? null,
    currency: code.currency ?? null,
  };
}
