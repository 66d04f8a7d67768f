import type { BodySchema, StringRule } from './validation.ts';

/**
 * What clients may send: the request body schemas and limits. Plain data with no imports of the
 * data layer, so the OpenAPI document can be built from them without any configuration.
 */
export const MAX_BODY_BYTES = 16 * 1024;

export const codeGeneratorSchema = {
  root: 'code_generator',
  unknownKeys: 'reject',
  readOnly: ['id', 'account_id', 'created_at', 'updated_at'],
  fields: {
    generation_type: {
      type: 'string',
      required: true,
      enum: ['tillgate', 'numeric'],
      description: '`tillgate`: random codes over 23456789ABCDEFGHJKLMNPQRSTUVWXYZ; `numeric`: random digits.',
    },
    buffer_type: { type: 'string', enum: ['default'], default: 'default' },
    code_length: { type: 'integer', required: true, minimum: 4, maximum: 32, description: 'Generated characters, prefix not counted.' },
    description: { type: 'string', maxLength: 255, default: '' },
    prefix: { type: 'string', pattern: /^[A-Z0-9-]{0,16}$/, patternHint: 'up to 16 of A-Z, 0-9 and -', default: '' },
    store_id: { type: 'integer', required: true, minimum: 1 },
    status: { type: 'string', enum: ['active', 'inactive'], default: 'active' },
  },
} as const satisfies BodySchema;

const optionalTransactionField: StringRule = { type: 'string', maxLength: 128 };

export const voidSchema = {
  root: 'transaction',
  // POS agents of many versions are in the field: keys this version does not know are dropped.
  unknownKeys: 'ignore',
  nullMeansAbsent: true,
  fields: {
    site_id: { type: 'string', required: true, minLength: 1, maxLength: 128 },
    pos_transaction_id: { type: 'string', required: true, minLength: 1, maxLength: 128 },
    occurred_at: { ...optionalTransactionField, format: 'date-time' },
    business_date: { ...optionalTransactionField, format: 'date' },
    register_id: optionalTransactionField,
    operator_id: optionalTransactionField,
    till_id: optionalTransactionField,
    table_id: optionalTransactionField,
    posagent_version: optionalTransactionField,
    pos_vendor: optionalTransactionField,
    pos_version: optionalTransactionField,
    receipt_id: optionalTransactionField,
  },
} as const satisfies BodySchema;
