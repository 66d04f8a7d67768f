/**
 * The code generator the HTTP suites create unless a test says otherwise: every field given (the
 * enumerated ones typed as the request schema's enums, so that the typed client takes it).
 */
export const winterPromotion = {
  generation_type: 'tillgate' as 'tillgate' | 'numeric',
  buffer_type: 'default' as const,
  code_length: 8,
  description: 'Winter promotion',
  prefix: 'WIN-',
  store_id: 42,
  status: 'active' as 'active' | 'inactive',
};

/** The fields of a code generator as every read answers them, in order: the seed's eleven, then the promotion terms, then its limits, then times_redeemed. */
export const GENERATOR_FIELDS = [
  'generation_type',
  'buffer_type',
  'code_length',
  'description',
  'prefix',
  'store_id',
  'status',
  'id',
  'account_id',
  'created_at',
  'updated_at',
  'discount',
  'minimum_basket',
  'valid_from',
  'valid_until',
  'site_ids',
  'max_redemptions_per_code',
  'max_redemptions',
  'max_redemptions_per_customer',
  'times_redeemed',
];

/** The limits of a generator that sets none (PRODUCT.md "Counting"): single-use codes, no budget, no limit per customer. */
export const DEFAULT_LIMITS = { max_redemptions_per_code: 1, max_redemptions: null, max_redemptions_per_customer: null };
