import Type, { type Static, type TSchema } from 'typebox';

/**
 * Every request part clients send, declared once with TypeBox: the TypeScript types of the
 * handlers, the JSON Schemas (2020-12) that ajv compiles into validators at build time
 * (`npm run schemas` → schemas/<name>.generated.ts, one module per schema) and the schemas the OpenAPI documents
 * embed all come from here. Plain data with no imports of the data layer.
 *
 * Three annotations shape the error messages (see validation.ts): `x-message` is the message when
 * a `pattern` or `not` keyword fails (on a union with null, when the value is neither; on a list,
 * whatever part of it failed); `x-kind` names what a query or path value must be;
 * `x-unknown-field` is what a key an object does not take is told. `x-component` names a schema
 * the OpenAPI documents show once, as a component the operations refer to. Another,
 * `x-documented-as`, is what the OpenAPI documents say of a path or query value that arrives as
 * text but means a number or a boolean (openapi/document.ts): a client generated from them sends
 * `limit: 100`, not `'100'`, while the server still checks the text with the pattern.
 * Every string a client sends has a `maxLength` (test/unit/http/openapi.test.ts walks the documents),
 * also where a pattern already bounds it, so that tools reading the documents see the bound.
 */
export { MAX_BODY_BYTES } from './limits.ts';
import { EVENT_TYPES } from '#data/event-types';

const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** A value the server owns or that cannot change: present at all, it is a 422 naming it. */
const forbidden = (message: string) => Type.Unsafe<never>({ not: {}, 'x-message': message });
const readOnly = () => forbidden('is read-only and cannot be set');

// ---------------------------------------------------------------- code generators

const GENERATION_TYPES = ['tillgate', 'numeric'] as const;
const GENERATOR_STATUSES = ['active', 'inactive'] as const;
const status = Type.Enum([...GENERATOR_STATUSES], { description: '`active` generators issue codes; `inactive` ones answer 409.' });
const description = Type.String({ maxLength: 255 });

// ---------------------------------------------------------------- promotion terms (PRODUCT.md "Promotion terms")

/** RFC 3339's syntax; the `date-time` format beside it adds the calendar and clock ranges. */
const RFC3339 = '^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$';
const MAX_AMOUNT = 10 ** 12;

const amountOff = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description });
const currency = Type.String({
  pattern: '^[A-Z]{3}$',
  maxLength: 3,
  'x-message': 'must be an ISO 4217 currency code: three uppercase letters, such as EUR',
  description: 'An ISO 4217 currency code that has a minor unit (EUR, USD, JPY, …); a code ISO 4217 does not list answers 422 naming it.',
});
/** `null` or the value; `x-message` says both when the value is neither (validation.ts). */
/** Null first: tools that merge a union's members into one (Portman's fuzzer) keep the object's type, and with it the path to its fields. */
const nullable = <T extends TSchema>(schema: T, message: string, description: string) =>
  Type.Union([Type.Null(), schema], { 'x-message': message, description });

const discountOf = (type: string) => ({ additionalProperties: false, 'x-unknown-field': `is not used by a discount of type "${type}"` }) as const;
const discountNone = Type.Object(
  { type: Type.Literal('none') },
  { ...discountOf('none'), 'x-component': 'DiscountNone', description: 'No discount of its own: the till applies what the description says.' },
);
const discountPercent = Type.Object(
  {
    type: Type.Literal('percent'),
    percent_off: Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'Greater than 0 and at most 100, with at most two decimals (12.5, 33.33).' }),
    max_amount_off: Type.Optional(amountOff('The most the discount takes off, in minor units of `currency` (1 to 10^12): given with `currency`, or neither.')),
    currency: Type.Optional(currency),
  },
  {
    ...discountOf('percent'),
    dependentRequired: { max_amount_off: ['currency'], currency: ['max_amount_off'] },
    'x-component': 'DiscountPercent',
    description: 'A percentage of the sale, optionally capped by `max_amount_off` in `currency` (the two together, or neither).',
  },
);
const discountAmount = Type.Object(
  {
    type: Type.Literal('amount'),
    amount_off: amountOff("An amount in minor units of `currency` (cents for EUR, yen for JPY), 1 to 10^12: at most the sale's total is taken off."),
    currency,
  },
  { ...discountOf('amount'), 'x-component': 'DiscountAmount', description: 'A fixed amount off the sale.' },
);
const DISCOUNT_TYPES = ['none', 'percent', 'amount'] as const;
/**
 * A union discriminated by `type`: the validators judge a discount by its type's schema only
 * (ajv's `discriminator`), so a fault is named inside it (`discount.percent_off`), not as a
 * failed alternative.
 */
const discount = Type.Unsafe<Static<typeof discountNone> | Static<typeof discountPercent> | Static<typeof discountAmount>>({
  type: 'object',
  oneOf: [discountNone, discountPercent, discountAmount],
  discriminator: { propertyName: 'type' },
  'x-component': 'Discount',
  description: `What a code gives, by \`type\` (${DISCOUNT_TYPES.join(', ')}). Keys a type does not use are absent, never null.`,
});
const money = Type.Object(
  { amount: amountOff('In minor units of `currency` (cents for EUR, yen for JPY), 1 to 10^12.'), currency },
  { additionalProperties: false, 'x-unknown-field': 'is not a field of an amount of money', 'x-component': 'Money', description: 'An amount of money.' },
);
const instant = (description: string) =>
  nullable(
    Type.String({
      format: 'date-time',
      pattern: RFC3339,
      // The longest form the pattern takes (nine decimals and an offset).
      maxLength: 35,
      'x-message': 'must be an RFC 3339 date-time such as 2026-11-21T14:03:00Z',
    }),
    'must be null or an RFC 3339 date-time such as 2026-11-21T14:03:00Z',
    `${description} Sent with any offset; read back in UTC with milliseconds.`,
  );

/** The four terms, each optional: on create their defaults apply, on PATCH an absent term stays as it is. */
const promotionTerms = {
  discount,
  minimum_basket: nullable(
    money,
    'must be null or an object with amount and currency',
    "null, or the least total a sale must have before this code's discount (its currency the discount's, when the discount has one).",
  ),
  valid_from: instant('null (no bound), or the first moment codes may be redeemed.'),
  valid_until: instant(
    'null (no bound), or the moment from which codes are refused; after valid_from when both are set. A moment in the past ends the promotion.',
  ),
  site_ids: nullable(
    Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 100, uniqueItems: true }),
    'must be null or a list of 1 to 100 distinct site ids, each a string of 1 to 128 characters',
    'null (every site), or the only sites whose tills may redeem: 1 to 100 distinct site ids, compared exactly.',
  ),
};

/** The names of the terms, in the order the answers show them. */
const TERM_FIELDS = Object.keys(promotionTerms) as (keyof typeof promotionTerms)[];

// ---------------------------------------------------------------- promotion limits (PRODUCT.md "Counting")

const MAX_USES_PER_CODE = 1_000_000;
const MAX_BUDGET = 100_000_000;
const MAX_USES_PER_CUSTOMER = 1000;

/** The three limits, each optional: on create their defaults apply, on PATCH an absent limit stays as it is. */
const promotionLimits = {
  max_redemptions_per_code: Type.Integer({
    minimum: 1,
    maximum: MAX_USES_PER_CODE,
    description: "How many transactions may hold one code at once, 1 to 1,000,000: 1 is a single-use code, more a code printed for many (a flyer's).",
  }),
  max_redemptions: nullable(
    Type.Integer({ minimum: 1, maximum: MAX_BUDGET }),
    `must be null or an integer from 1 to ${MAX_BUDGET}`,
    "null (no budget), or the promotion's budget: how many uses all its codes together may hold at once, 1 to 100,000,000.",
  ),
  max_redemptions_per_customer: nullable(
    Type.Integer({ minimum: 1, maximum: MAX_USES_PER_CUSTOMER }),
    `must be null or an integer from 1 to ${MAX_USES_PER_CUSTOMER}`,
    "null (no limit per customer), or how many uses one customer (the till's transaction.customer_id) may hold across all the promotion's codes, 1 to 1,000; a till must then send the customer.",
  ),
};

/** The names of the limits, in the order the answers show them (after the terms). */
const LIMIT_FIELDS = Object.keys(promotionLimits) as (keyof typeof promotionLimits)[];

export const codeGeneratorCreate = Type.Object(
  {
    generation_type: Type.Enum([...GENERATION_TYPES], {
      description: '`tillgate`: random codes over 23456789ABCDEFGHJKLMNPQRSTUVWXYZ; `numeric`: random digits.',
    }),
    buffer_type: Type.Optional(Type.Enum(['default'], { default: 'default' })),
    code_length: Type.Integer({ minimum: 4, maximum: 32, description: 'Generated characters, prefix not counted.' }),
    description: Type.Optional({ ...description, default: '' }),
    prefix: Type.Optional(Type.String({ pattern: '^[A-Z0-9-]{0,16}$', maxLength: 16, default: '', 'x-message': 'must be up to 16 of A-Z, 0-9 and -' })),
    store_id: Type.Integer({ minimum: 1, maximum: SAFE_MAX }),
    status: Type.Optional({ ...status, default: 'active' }),
    discount: Type.Optional({ ...promotionTerms.discount, default: { type: 'none' } }),
    minimum_basket: Type.Optional({ ...promotionTerms.minimum_basket, default: null }),
    valid_from: Type.Optional({ ...promotionTerms.valid_from, default: null }),
    valid_until: Type.Optional({ ...promotionTerms.valid_until, default: null }),
    site_ids: Type.Optional({ ...promotionTerms.site_ids, default: null }),
    max_redemptions_per_code: Type.Optional({ ...promotionLimits.max_redemptions_per_code, default: 1 }),
    max_redemptions: Type.Optional({ ...promotionLimits.max_redemptions, default: null }),
    max_redemptions_per_customer: Type.Optional({ ...promotionLimits.max_redemptions_per_customer, default: null }),
    id: Type.Optional(readOnly()),
    account_id: Type.Optional(readOnly()),
    created_at: Type.Optional(readOnly()),
    updated_at: Type.Optional(readOnly()),
    times_redeemed: Type.Optional(readOnly()),
  },
  { additionalProperties: false },
);

const CHANGEABLE = ['status', 'description', ...TERM_FIELDS, ...LIMIT_FIELDS];
const immutable = () => forbidden(`cannot be changed; only ${CHANGEABLE.slice(0, -1).join(', ')} and ${CHANGEABLE.at(-1)} can`);

const codeGeneratorPatch = Type.Object(
  {
    status: Type.Optional(status),
    description: Type.Optional(description),
    discount: Type.Optional(promotionTerms.discount),
    minimum_basket: Type.Optional(promotionTerms.minimum_basket),
    valid_from: Type.Optional(promotionTerms.valid_from),
    valid_until: Type.Optional(promotionTerms.valid_until),
    site_ids: Type.Optional(promotionTerms.site_ids),
    max_redemptions_per_code: Type.Optional(promotionLimits.max_redemptions_per_code),
    max_redemptions: Type.Optional(promotionLimits.max_redemptions),
    max_redemptions_per_customer: Type.Optional(promotionLimits.max_redemptions_per_customer),
    generation_type: Type.Optional(immutable()),
    buffer_type: Type.Optional(immutable()),
    code_length: Type.Optional(immutable()),
    prefix: Type.Optional(immutable()),
    store_id: Type.Optional(immutable()),
    id: Type.Optional(readOnly()),
    account_id: Type.Optional(readOnly()),
    created_at: Type.Optional(readOnly()),
    updated_at: Type.Optional(readOnly()),
    times_redeemed: Type.Optional(readOnly()),
  },
  { additionalProperties: false },
);

const codesIssue = Type.Object(
  { count: Type.Integer({ minimum: 1, maximum: 1000, description: 'How many codes to issue.' }) },
  { additionalProperties: false },
);

const issuanceJobCreate = Type.Object(
  { count: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'How many codes the job issues, all or none.' }) },
  { additionalProperties: false },
);

const exportCreate = Type.Object(
  {
    redeemed: Type.Optional(
      Type.Boolean({ description: 'Only the redeemed codes (true: times_redeemed of 1 or more) or only the others (false); absent: every issued code.' }),
    ),
  },
  { additionalProperties: false },
);

// ---------------------------------------------------------------- webhook endpoints

const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const;
const webhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'An https:// URL without user or password, whose host is not an IP literal of a loopback, private, link-local, unique-local, multicast or unspecified range (IPv4-mapped IPv6 included). The local stack accepts http:// and loopback too.',
});
const webhookEventTypes = Type.Array(Type.Enum([...EVENT_TYPES, '*']), {
  minItems: 1,
  uniqueItems: true,
  description: 'Distinct event types, or ["*"]: every type, those added later included.',
});
const webhookStatus = Type.Enum([...WEBHOOK_STATUSES], { description: '`enabled` endpoints receive events; `disabled` ones receive nothing.' });
const serverOwned = {
  id: Type.Optional(readOnly()),
  secret: Type.Optional(forbidden('is generated by the server: rotate it with POST /v1.0/webhook_endpoints/{id}/rotate_secret')),
  created_at: Type.Optional(readOnly()),
  updated_at: Type.Optional(readOnly()),
};

export const webhookEndpointCreate = Type.Object(
  {
    url: webhookUrl,
    event_types: Type.Optional({ ...webhookEventTypes, default: ['*'] }),
    description: Type.Optional({ ...description, default: '' }),
    status: Type.Optional({ ...webhookStatus, default: 'enabled' }),
    ...serverOwned,
  },
  { additionalProperties: false },
);

const webhookEndpointPatch = Type.Object(
  {
    url: Type.Optional(webhookUrl),
    event_types: Type.Optional(webhookEventTypes),
    description: Type.Optional(description),
    status: Type.Optional(webhookStatus),
    ...serverOwned,
  },
  { additionalProperties: false },
);

/** The actions with nothing to say (rotate, retry): no body, or `{}`. */
const emptyObject = Type.Object({}, { additionalProperties: false });

// ---------------------------------------------------------------- voids

const optionalText = (options: object = {}) => Type.Optional(Type.Union([Type.String({ maxLength: 128, ...options }), Type.Null()]));

/**
 * POS agents of many versions are in the field: keys this version does not know are ignored
 * (dropped after validation), and `null` counts as absent (dropped before validation).
 */
const voidTransaction = Type.Object({
  site_id: Type.String({ minLength: 1, maxLength: 128 }),
  pos_transaction_id: Type.String({ minLength: 1, maxLength: 128 }),
  occurred_at: optionalText({ format: 'date-time', pattern: RFC3339 }),
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

const MAX_CODES_PER_REQUEST = 10;

/**
 * POST /v2.0/redeemed_codes and /v2.0/validated_codes: the fields of a void and the codes, read
 * as leniently as a void (unknown keys ignored, null absent). Letters in any case; a code listed
 * twice counts once.
 */
const codesRedemption = Type.Object({
  ...voidTransaction.properties,
  codes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: MAX_CODES_PER_REQUEST,
    description: 'The codes as scanned or typed, letters in any case: 1 to 10, each 1 to 64 characters.',
    'x-message': `must be a list of 1 to ${MAX_CODES_PER_REQUEST} codes, each a string of 1 to 64 characters`,
  }),
  // Keys inside it that this version does not know are accepted and ignored, as elsewhere on the pos host.
  basket: Type.Optional(
    Type.Union(
      [
        // Null first, as in `nullable` above.
        Type.Null(),
        Type.Object({
          total: Type.Integer({
            minimum: 0,
            maximum: MAX_AMOUNT,
            description: "In minor units of currency, 0 to 10^12: the sale's total before this request's codes.",
          }),
          currency,
        }),
      ],
      {
        description:
          "The sale: its total before the discounts of this request's codes (null: no basket). Needed by a code whose promotion sets minimum_basket.",
      },
    ),
  ),
  // Its messages never show the value: validation.ts names a string's type and length, not its text.
  customer_id: Type.Optional(
    Type.Union(
      [
        // Null first, as in `nullable` above.
        Type.Null(),
        Type.String({ minLength: 1, maxLength: 128 }),
      ],
      {
        description:
          'The customer: a loyalty card or customer number, 1 to 128 characters (null: no customer). Needed by a code whose promotion sets max_redemptions_per_customer. Never logged, never returned, stored only as a keyed hash.',
      },
    ),
  ),
});

// ---------------------------------------------------------------- path and query parameters

/**
 * A regular expression for the decimal numbers from 1 to `max`, written as the server reads them:
 * no sign, no leading zero, no exponent. For each digit of `max` that is above 0, the numbers of
 * that length sharing the digits before it and smaller at it; then `max` itself; then every
 * shorter length.
 */
function positiveDecimalUpTo(max: number): string {
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
  Type.String({
    pattern: positiveDecimalUpTo(SAFE_MAX),
    maxLength: String(SAFE_MAX).length,
    'x-kind': `a positive integer of at most ${SAFE_MAX} (2^53 - 1)`,
    'x-documented-as': { type: 'integer', minimum: 1, maximum: SAFE_MAX },
    description,
  });

const idPath = Type.Object({ id: positiveInteger('A positive integer; anything else answers 400.') });

const deliveryPath = Type.Object({
  id: positiveInteger('The webhook endpoint id.'),
  event_id: positiveInteger('The event id: webhook-id of its deliveries.'),
});

const codePath = Type.Object({
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
  'x-documented-as': { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  description: 'Items per page, 1–1000 (default 100).',
});
const cursorOf = (maxLength: number) =>
  Type.String({
    minLength: 1,
    maxLength,
    'x-kind': 'a cursor returned by the previous page',
    description: 'Opaque: the next_cursor of the previous page, with the same filters.',
  });
const cursor = cursorOf(512);

const listQuery = Type.Object({ limit: Type.Optional(limit), cursor: Type.Optional(cursor) }, { additionalProperties: false });

/**
 * A page of a code's redemptions starts after the last one's time and transaction (its account,
 * site_id and pos_transaction_id as JSON), which its cursor holds: about 200 characters for ids of
 * ten, past 512 for ids that JSON escapes, and never past 2,100 (that sort key is at most DynamoDB's
 * 1,024 bytes).
 */
const codeRedemptionListQuery = Type.Object({ limit: Type.Optional(limit), cursor: Type.Optional(cursorOf(4096)) }, { additionalProperties: false });

const codeGeneratorListQuery = Type.Object(
  {
    limit: Type.Optional(limit),
    cursor: Type.Optional(cursor),
    store_id: Type.Optional(positiveInteger('Only the generators of this store.')),
  },
  { additionalProperties: false },
);

const codeListQuery = Type.Object(
  {
    limit: Type.Optional(limit),
    cursor: Type.Optional(cursor),
    redeemed: Type.Optional(
      Type.String({
        pattern: '^(true|false)$',
        maxLength: 5,
        'x-kind': 'true or false',
        'x-documented-as': { type: 'boolean' },
        description: 'Only the redeemed codes (true) or only the others (false).',
      }),
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
  issuanceJobCreate,
  exportCreate,
  voidTransaction,
  codesRedemption,
  idPath,
  codePath,
  listQuery,
  codeGeneratorListQuery,
  codeListQuery,
  codeRedemptionListQuery,
  webhookEndpointCreate,
  webhookEndpointPatch,
  emptyObject,
  deliveryPath,
} satisfies Record<string, TSchema>;

export type SchemaName = keyof typeof requestSchemas;

export type CodeGeneratorCreate = Static<typeof codeGeneratorCreate>;
export type CodeGeneratorPatch = Static<typeof codeGeneratorPatch>;
export type WebhookEndpointCreate = Static<typeof webhookEndpointCreate>;
export type WebhookEndpointPatch = Static<typeof webhookEndpointPatch>;
export type VoidTransactionInput = { site_id: string; pos_transaction_id: string } & Partial<Record<string, string>>;
/** A sale's total as a till sends it (keys inside it this version does not know are not in the type). */
type Basket = { total: number; currency: string };
export type CodesRedemptionInput = { site_id: string; pos_transaction_id: string; codes: string[]; basket?: Basket; customer_id?: string } & Partial<
  Record<string, string | string[] | Basket>
>;
