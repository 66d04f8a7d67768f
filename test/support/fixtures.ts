/** The code generator the HTTP suites create unless a test says otherwise: every field given. */
export const winterPromotion = {
  generation_type: 'tillgate',
  buffer_type: 'default',
  code_length: 8,
  description: 'Winter promotion',
  prefix: 'WIN-',
  store_id: 42,
  status: 'active',
};
