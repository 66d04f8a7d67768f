import type { ErrorObject } from 'ajv';
import { HttpError, validationFailed, type Problem } from './errors.ts';
import type { SchemaName } from './schemas.ts';

/**
 * Runs the ajv validators compiled from schemas.ts and turns ajv's errors into the contract's
 * problems: one per field, named by its dotted path, with the messages clients and tests rely on.
 * Bodies fail with 422; path and query parameters with 400.
 */
type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * One request schema compiled by `npm run schemas` (schemas/<name>.generated.ts): its validator
 * and the schema as plain JSON (TypeBox stays out of the function bundles). A handler imports the
 * ones of its route only, so its bundle carries no other route's validators.
 */
export interface GeneratedSchema {
  readonly name: SchemaName;
  readonly validate: Validator;
  readonly schema: { readonly properties: Record<string, Record<string, unknown>> };
}

/** Which error of a field to report when several keywords fail: the most basic first. */
const PRIORITY = ['required', 'not', 'additionalProperties', 'type', 'minLength', 'maxLength', 'minimum', 'maximum', 'enum', 'pattern', 'format'];

const FORMAT_MESSAGES: Record<string, string> = {
  'date-time': 'must be an RFC 3339 date-time such as 2026-11-21T14:03:00Z',
  date: 'must be a date of the form YYYY-MM-DD',
};

/**
 * A value of the right form that names no real moment (2025-02-30, 24:00:00) fails only the
 * format: its message says so rather than repeating the form the client already used.
 */
const NONEXISTENT: Record<string, { shape: RegExp; message: (value: string) => string }> = {
  date: {
    shape: /^\d{4}-\d{2}-\d{2}$/,
    message: (value) => `must be a date that exists: ${value} is not a day of the calendar`,
  },
  'date-time': {
    shape: /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/,
    message: (value) => `must be a date-time that exists: ${value} is not a real day and time of day (hours 00-23, minutes 00-59, offset at most ±23:59)`,
  },
};

type Where = { kind: 'body'; root: string } | { kind: 'query' } | { kind: 'path' };

/**
 * A route's rules for what its body schema cannot say (webhook URLs, `*` standing alone): given
 * the resource and whether a top-level field passed its own schema check, the problems of the
 * fields that did, each named by its key (`url`) and said without the field's name
 * (`must be an https:// URL`). They run with the schema, so one 422 lists every problem of the
 * body, and never on a field the schema refused (one entry per field). They must not reach the
 * network: they also run on bodies refused anyway.
 */
export type BodyRules = (resource: Readonly<Record<string, unknown>>, passed: (key: string) => boolean) => readonly BodyRuleProblem[];
export interface BodyRuleProblem {
  readonly key: string;
  readonly message: string;
}

/** The validated body resource (defaults applied) or a 422 listing every problem, the schema's and the route's rules'. */
export function checkBody<T>(compiled: GeneratedSchema, resource: Record<string, unknown>, root: string, rules?: BodyRules): T {
  const problems = run(compiled, resource, { kind: 'body', root }, rules);
  if (problems.length > 0) throw validationFailed(problems);
  return resource as T;
}

/** Query or path parameters, converted (positive integers become numbers), or a 400. */
export function checkParameters<T>(compiled: GeneratedSchema, values: Record<string, string>, kind: 'query' | 'path'): T {
  const problems = run(compiled, values, { kind });
  const properties = compiled.schema.properties;
  const converted: Record<string, string | number> = { ...values };
  for (const [key, value] of Object.entries(values)) {
    if (!String(properties[key]?.['x-kind'] ?? '').startsWith('a positive integer') || problems.some((p) => p.field === key)) continue;
    const number = Number(value);
    if (Number.isSafeInteger(number)) converted[key] = number;
    else problems.push({ message: `${key} must be a positive integer`, field: key });
  }
  if (problems.length > 0) throw new HttpError(400, 'bad_request', problems);
  return converted as T;
}

function run({ validate, schema }: GeneratedSchema, data: Record<string, unknown>, where: Where, rules?: BodyRules): Problem[] {
  const byField = new Map<string, ErrorObject>();
  if (!validate(data)) {
    for (const error of validate.errors ?? []) {
      if (error.keyword === 'anyOf' || (error.parentSchema as { type?: string } | undefined)?.type === 'null') continue;
      const key = fieldKey(error);
      const current = byField.get(key);
      if (!current || PRIORITY.indexOf(error.keyword) < PRIORITY.indexOf(current.keyword)) byField.set(key, error);
    }
  }
  // A body without a root (`{"count":n}`) names its fields bare: `count`, not `.count`.
  const fieldOf = (key: string) => (where.kind === 'body' && where.root ? `${where.root}.${key}` : key);
  // Keys that must not be sent come first, in the client's order; then the declared fields, in the schema's.
  const sent = Object.keys(data);
  const declared = Object.keys(schema.properties);
  const found: { key: string; first: boolean; message: string }[] = [...byField.entries()].map(([key, error]) => {
    // A list's message says what the whole list must be, whichever item or bound failed.
    const property = schema.properties[key];
    const listMessage = error.keyword !== 'required' && property?.type === 'array' ? (property['x-message'] as string | undefined) : undefined;
    return { key, first: error.keyword === 'additionalProperties' || error.keyword === 'not', message: listMessage ?? describe(error, where) };
  });
  for (const { key, message } of rules?.(data, (key) => !byField.has(key)) ?? []) found.push({ key, first: false, message });
  const rank = ({ key, first }: { key: string; first: boolean }) => (first ? sent.indexOf(key) : sent.length + declared.indexOf(key));
  return found
    .sort((a, b) => rank(a) - rank(b))
    .map(({ key, message }) => {
      const field = fieldOf(key);
      return { message: `${field} ${message}`, field };
    });
}

/** The top-level key an error is about. */
function fieldKey(error: ErrorObject): string {
  if (error.keyword === 'required') return String(error.params.missingProperty);
  if (error.keyword === 'additionalProperties') return String(error.params.additionalProperty);
  return decodeURIComponent(error.instancePath.split('/')[1] ?? '')
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
}

/** A JSON Schema type as an error message names it, with its article. */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};

function describe(error: ErrorObject, where: Where): string {
  const schema = (error.parentSchema ?? {}) as Record<string, any>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return where.kind === 'body' ? 'is not a known field' : `is not a known ${where.kind} parameter`;
    case 'not':
      return schema['x-message'] ?? 'is not allowed';
    case 'type':
      return `must be ${TYPE_NAMES[schema.type as string] ?? `of type ${schema.type}`}`;
    case 'minItems':
      return schema.minItems === 1 ? 'must list at least one value' : `must list at least ${schema.minItems} values`;
    case 'maxItems':
      return `must list at most ${schema.maxItems} values`;
    case 'uniqueItems':
      return 'must not list the same value twice';
    case 'minLength':
      return schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`;
    case 'maxLength':
      // A bound that only backs up a pattern (documented for tools): the pattern's own message.
      if (schema.pattern && schema['x-kind']) return `must be ${schema['x-kind']}`;
      if (schema.pattern && schema['x-message']) return schema['x-message'];
      return `must be at most ${schema.maxLength} characters`;
    case 'minimum':
    case 'maximum':
      if (schema.maximum === Number.MAX_SAFE_INTEGER) {
        return error.keyword === 'minimum' ? `must be at least ${schema.minimum}` : `must be an integer of at most ${schema.maximum} (2^53 - 1)`;
      }
      return schema.minimum !== undefined && schema.maximum !== undefined
        ? `must be between ${schema.minimum} and ${schema.maximum}`
        : error.keyword === 'minimum'
          ? `must be at least ${schema.minimum}`
          : `must be at most ${schema.maximum}`;
    case 'enum':
      return `must be one of ${(schema.enum as string[]).map((value) => `"${value}"`).join(', ')}`;
    case 'pattern':
    case 'format':
      // Only the format failed, on a value of the right form: it names no real day or time.
      if (error.keyword === 'format' && typeof error.data === 'string' && NONEXISTENT[schema.format]?.shape.test(error.data)) {
        return NONEXISTENT[schema.format]!.message(error.data);
      }
      if (schema.format && FORMAT_MESSAGES[schema.format]) return FORMAT_MESSAGES[schema.format]!;
      if (schema['x-kind']) return `must be ${schema['x-kind']}`;
      return schema['x-message'] ?? `must match ${schema.pattern}`;
    default:
      return where.kind === 'body' ? 'is not valid' : `must be ${schema['x-kind'] ?? 'valid'}`;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
