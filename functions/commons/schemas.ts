import Type, { type Static, type TSchema } from 'typebox';

/**
 * Every request part clients send, declared once with TypeBox: the TypeScript types of the
 * handlers, the JSON Schemas (2020-12) that ajv compiles into validators at build time
 * (`npm run schemas` → schemas/<name>.generated.ts, one module per schema) and the schemas the OpenAPI documents
 * embed all come from here. Plain data with no imports of the data layer.
 *
 * Two annotations shape the error messages (see validation.ts): `x-message` is the message when
 * a `pattern` or `not` keyword fails; `x-kind` names what a query or path value must be.
 * Every string a client sends has a `maxLength` (test/unit/openapi.test.ts walks the documents),
 * also where a pattern already bounds it, so that tools reading the documents see the bound.
 */
export { MAX_BODY_BYTES } from './limits.ts';

const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** A value the server owns or that cannot change: present at all, it is a 422 naming it. */
const forbidden = (message: string) => Type.Unsafe<never>({ not: {}, 'x-message': message });
const readOnly = () => forbidden('is read-only and cannot be set');

// ---------------------------------------------------------------- code generators

export const GENERATION_TYPES = ['tillgate', 'numeric'] as const;
export const GENERATOR_STATUSES = ['active', 'inactive'] as const;
const status = Type.Enum([...GENERATOR_STATUSES], { description: '`active` generators issue codes; `inactive` ones answer 409.' });
const description = Type.String({ maxLength: 255 });

export const codeGeneratorCreate = Type.Object(
  {
    generation_type: Type.Enum([...GENERATION_TYPES], {
      description: '`tillgate`: random codes over 23456789ABCDEFGHJKLMNPQRSTUVWXYZ; `numeric`: random digits.',
    }),
    buffer_type: Type.Optional(Type.Enum(['default'], { default: 'default' })),
    code_length: Type.Integer({ minimum: 4, maximum: 32, description: 'Generated characters, prefix not counted.' }),
    description: Type.Optional({ ...description, default: '' }),
    prefix: Type.Optional(
      Type.String({ pattern: '^[A-Z0-9-]{0,16}$', maxLength: 16, default: '', 'x-message': 'must be up to 16 of A-Z, 0-9 and -' }),
    ),
    store_id: Type.Integer({ minimum: 1, maximum: SAFE_MAX }),
    status: Type.Optional({ ...status, default: 'active' }),
    id: Type.Optional(readOnly()),
    account_id: Type.Optional(readOnly()),
    created_at: Type.Optional(readOnly()),
    updated_at: Type.Optional(readOnly()),
  },
  { additionalProperties: false },
);

const immutable = () => forbidden('cannot be changed; only status and description can');

export const codeGeneratorPatch = Type.Object(
  {
    status: Type.Optional(status),
    description: Type.Optional(description),
    generation_type: Type.Optional(immutable()),
    buffer_type: Type.Optional(immutable()),
    code_length: Type.Optional(immutable()),
    prefix: Type.Optional(immutable()),
    store_id: Type.Optional(immutable()),
    id: Type.Optional(readOnly()),
    account_id: Type.Optional(readOnly()),
    created_at: Type.Optional(readOnly()),
    updated_at: Type.Optional(readOnly()),
  },
  { additionalProperties: false },
);

export const codesIssue = Type.Object(
  { count: Type.Integer({ minimum: 1, maximum: 1000, description: 'How many codes to issue.' }) },
  { additionalProperties: false },
);

// ---------------------------------------------------------------- voids

const optionalText = (options: object = {}) =>
  Type.Optional(Type.Union([Type.String({ maxLength: 128, ...options }), Type.Null()]));

/**
 * POS agents of many versions are in the field: keys this version does not know are ignored
 * (dropped after validation), and `null` counts as absent (dropped before validation).
 */
export const voidTransaction = Type.Object({
  site_id: Type.String({ minLength: 1, maxLength: 128 }),
  pos_transaction_id: Type.String({ minLength: 1, maxLength: 128 }),
  // The pattern is RFC 3339's syntax; the format adds the calendar and clock ranges.
  occurred_at: optionalText({
    format: 'date-time',
    pattern: '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$',
  }),
  business_date: optionalText({ format: 'date' }),
  register_id: optionalText(),
  operator_id: optionalText(),
  till_id: optionalText(),
  table_id: optionalText(),
  posagent_version: optionalText(),
  pos_vendor: optionalText(),
  pos_version: optionalText(),
  receipt_id: optionalText(),
});

// ---------------------------------------------------------------- redemption at the till

export const MAX_CODES_PER_REQUEST = 10;

/**
 * POST /v2.0/redeemed_codes and /v2.0/validated_codes: the fields of a void and the codes, read
 * as leniently as a void (unknown keys ignored, null absent). Letters in any case; a code listed
 * twice counts once.
 */
export const codesRedemption = Type.Object({
  ...voidTransaction.properties,
  codes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: MAX_CODES_PER_REQUEST,
    description: 'The codes as scanned or typed, letters in any case: 1 to 10, each 1 to 64 characters.',
    'x-message': `must be a list of 1 to ${MAX_CODES_PER_REQUEST} codes, each a string of 1 to 64 characters`,
  }),
});

// ---------------------------------------------------------------- path and query parameters

/**
 * A regular expression for the decimal numbers from 1 to `max`, written as the server reads them:
 * no sign, no leading zero, no exponent. For each digit of `max` that is above 0, the numbers of
 * that length sharing the digits before it and smaller at it; then `max` itself; then every
 * shorter length.
 */
export function positiveDecimalUpTo(max: number): string {
  const digits = String(max);
  const alternatives: string[] = [];
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]);
    const low = i === 0 ? 1 : 0;
    if (digit - 1 < low) continue;
    const range = digit - 1 === low ? String(low) : `[${low}-${digit - 1}]`;
    const rest = digits.length - i - 1;
    alternatives.push(`${digits.slice(0, i)}${range}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  alternatives.push(digits);
  if (digits.length > 1) alternatives.push(`[1-9]${digits.length > 2 ? `[0-9]{0,${digits.length - 2}}` : '[0-9]?'}`);
  return `^(?:${alternatives.join('|')})$`;
}

/**
 * Path and query values arrive as strings; the patterns are exactly what the server accepts: a
 * positive integer is decimal, without sign or leading zero, at most 2^53 − 1.
 */
const positiveInteger = (description: string) =>
  Type.String({ pattern: positiveDecimalUpTo(SAFE_MAX), maxLength: String(SAFE_MAX).length, 'x-kind': 'a positive integer', description });

export const idPath = Type.Object({ id: positiveInteger('A positive integer; anything else answers 400.') });

export const codePath = Type.Object({
  id: positiveInteger('The code generator id.'),
  // Any text: a code that is not one the generator issued, however it is spelled, answers 404
  // (PRODUCT.md); the handler turns away what cannot be a code before it reads anything.
  code: Type.String({
    minLength: 1,
    description: 'A code as issued; letters in any case. Anything this generator did not issue answers 404.',
  }),
});

const limit = Type.String({
  pattern: '^([1-9][0-9]{0,2}|1000)$',
  maxLength: 4,
  'x-kind': 'an integer from 1 to 1000',
  description: 'Items per page, 1–1000 (default 100).',
});
const cursor = Type.String({
  minLength: 1,
  maxLength: 512,
  'x-kind': 'a cursor returned by the previous page',
  description: 'Opaque: the next_cursor of the previous page, with the same filters.',
});

export const listQuery = Type.Object({ limit: Type.Optional(limit), cursor: Type.Optional(cursor) }, { additionalProperties: false });

export const codeGeneratorListQuery = Type.Object(
  {
    limit: Type.Optional(limit),
    cursor: Type.Optional(cursor),
    store_id: Type.Optional(positiveInteger('Only the generators of this store.')),
  },
  { additionalProperties: false },
);

export const codeListQuery = Type.Object(
  {
    limit: Type.Optional(limit),
    cursor: Type.Optional(cursor),
    redeemed: Type.Optional(
      Type.String({ pattern: '^(true|false)$', maxLength: 5, 'x-kind': 'true or false', description: 'Only the redeemed codes (true) or only the others (false).' }),
    ),
  },
  { additionalProperties: false },
);

// ---------------------------------------------------------------- the catalogue

/** Everything `npm run schemas` compiles, by name. The body schemas are the object under `root`. */
export const requestSchemas = {
  codeGeneratorCreate,
  codeGeneratorPatch,
  codesIssue,
  voidTransaction,
  codesRedemption,
  idPath,
  codePath,
  listQuery,
  codeGeneratorListQuery,
  codeListQuery,
} satisfies Record<string, TSchema>;

export type SchemaName = keyof typeof requestSchemas;

export type CodeGeneratorCreate = Static<typeof codeGeneratorCreate>;
export type CodeGeneratorPatch = Static<typeof codeGeneratorPatch>;
export type CodesIssue = Static<typeof codesIssue>;
export type VoidTransactionInput = { site_id: string; pos_transaction_id: string } & Partial<Record<string, string>>;
export type CodesRedemptionInput = { site_id: string; pos_transaction_id: string; codes: string[] } & Partial<Record<string, string | string[]>>;
