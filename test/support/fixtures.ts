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
