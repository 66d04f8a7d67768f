import { timesRedeemed, type CodeGenerator, type Discount, type Money } from '#data/code-generators';
import type { CodeView } from '#data/codes';

/**
 * The eleven fields of the seed, in its order, then the promotion's terms and its limits with
 * their defaults, then `times_redeemed` (read-only: the sum of `shard_uses`, which a worker
 * keeps). Objects are built key by key, so an answer (and its ETag) never depends on the order in
 * which DynamoDB hands back a map's keys. The versions (`terms_version`, `shards_version`) and the
 * uses per shard are internal.
 */
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
    discount: presentDiscount(generator.discount),
    minimum_basket: generator.minimum_basket && presentMoney(generator.minimum_basket),
    valid_from: generator.valid_from,
    valid_until: generator.valid_until,
    site_ids: generator.site_ids && [...generator.site_ids],
    max_redemptions_per_code: generator.max_redemptions_per_code,
    max_redemptions: generator.max_redemptions,
    max_redemptions_per_customer: generator.max_redemptions_per_customer,
    times_redeemed: timesRedeemed(generator),
  };
}

const presentMoney = (money: Money): Money => ({ amount: money.amount, currency: money.currency });

/** A discount with the keys of its type only, in a fixed order. */
function presentDiscount(discount: Discount): Discount {
  switch (discount.type) {
    case 'none':
      return { type: 'none' };
    case 'percent':
      return {
        type: 'percent',
        percent_off: discount.percent_off,
        ...(discount.max_amount_off !== undefined ? { max_amount_off: discount.max_amount_off, currency: discount.currency } : {}),
      };
    case 'amount':
      return { type: 'amount', amount_off: discount.amount_off, currency: discount.currency };
  }
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
