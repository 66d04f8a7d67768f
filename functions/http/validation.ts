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
const PRIORITY = [
  'required',
  'not',
  'additionalProperties',
  'discriminator',
  'dependentRequired',
  'type',
  'exclusiveMinimum',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'enum',
  'pattern',
  'format',
];

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
 * A route's rules for what its body schema cannot say (webhook URLs, `*` standing alone, a
 * currency ISO 4217 lists): given the resource and whether a field passed its own schema check
 * (a field is named by its path below the resource, dotted: `url`, `discount.currency`; it passed
 * when neither it, nor what holds it, nor anything inside it failed), the problems of the fields
 * that did, each named by its path and said without the field's name (`must be an https:// URL`).
 * They run with the schema, so one 422 lists every problem of the body, and never on a field the
 * schema refused (one entry per field). They must not reach the network: they also run on bodies
 * refused anyway.
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
  // The top-level key that holds each field (a key may itself contain a dot).
  const tops = new Map<string, string>();
  // What a union with null (`x-message` on its anyOf) says when the value is neither.
  const unionMessages = new Map<string, string>();
  if (!validate(data)) {
    for (const error of validate.errors ?? []) {
      const path = fieldPath(error, data);
      const key = path.join('.');
      const parent = error.parentSchema as Record<string, unknown> | undefined;
      if (error.keyword === 'anyOf') {
        if (typeof parent?.['x-message'] === 'string') unionMessages.set(key, parent['x-message']);
        continue;
      }
      if (parent?.type === 'null') continue;
      tops.set(key, path[0] ?? '');
      const current = byField.get(key);
      if (!current || PRIORITY.indexOf(error.keyword) < PRIORITY.indexOf(current.keyword)) byField.set(key, error);
    }
  }
  // A body without a root (`{"count":n}`) names its fields bare: `count`, not `.count`.
  const fieldOf = (key: string) => (where.kind === 'body' && where.root ? `${where.root}.${key}` : key);
  // Keys that must not be sent come first, in the client's order; then the declared fields, in the
  // schema's, a field inside one (`discount.percent_off`) with the top-level field that holds it.
  const sent = Object.keys(data);
  const declared = Object.keys(schema.properties);
  const found: { key: string; top: string; first: boolean; message: string }[] = [...byField.entries()].map(([key, error]) => {
    const top = tops.get(key)!;
    const nested = key !== top;
    // A list's message says what the whole list must be, whichever item or bound failed.
    const property = nested ? undefined : schema.properties[key];
    const listMessage = error.keyword !== 'required' && property && isList(property) ? (property['x-message'] as string | undefined) : undefined;
    const unionMessage = error.keyword === 'type' ? unionMessages.get(key) : undefined;
    const first = !nested && (error.keyword === 'additionalProperties' || error.keyword === 'not');
    return { key, top, first, message: listMessage ?? unionMessage ?? describe(error, where) };
  });
  const passed = (key: string) => ![...byField.keys()].some((failed) => failed === key || failed.startsWith(`${key}.`) || key.startsWith(`${failed}.`));
  // The rules name declared fields, a nested one by its path (`discount.currency`).
  for (const { key, message } of rules?.(data, passed) ?? []) found.push({ key, top: key.split('.')[0]!, first: false, message });
  const rank = ({ top, first }: { top: string; first: boolean }) => (first ? sent.indexOf(top) : sent.length + declared.indexOf(top));
  return found
    .sort((a, b) => rank(a) - rank(b))
    .map(({ key, message }) => {
      const field = fieldOf(key);
      return { message: `${field} ${message}`, field };
    });
}

const isList = (property: Record<string, unknown>) =>
  property.type === 'array' || (Array.isArray(property.anyOf) && property.anyOf.some((branch: { type?: unknown }) => branch.type === 'array'));

/**
 * The field an error is about: its path below the resource (`code_length`; `discount`,
 * `percent_off`), named with dots. A value inside a list is the list's: its message says what
 * the whole list must be.
 */
function fieldPath(error: ErrorObject, data: unknown): string[] {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~'));
  // These name the key at fault inside the object at instancePath.
  const inner =
    error.keyword === 'required' || error.keyword === 'dependentRequired'
      ? error.params.missingProperty
      : error.keyword === 'additionalProperties'
        ? error.params.additionalProperty
        : error.keyword === 'discriminator'
          ? error.params.tag
          : undefined;
  if (inner !== undefined) segments.push(String(inner));
  const kept: string[] = [];
  let value = data;
  for (const segment of segments) {
    if (Array.isArray(value)) break;
    kept.push(segment);
    value = isPlainObject(value) ? value[segment] : undefined;
  }
  return kept;
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
      return where.kind === 'body' ? (schema['x-unknown-field'] ?? 'is not a known field') : `is not a known ${where.kind} parameter`;
    case 'discriminator': {
      // The union's branches each name their tag's value (schemas.ts, discount).
      const tags = (schema.oneOf as { properties: Record<string, { const: string }> }[]).map((branch) => branch.properties[error.params.tag]!.const);
      return error.params.tagValue === undefined ? 'is required' : `must be one of ${tags.map((tag) => `"${tag}"`).join(', ')}`;
    }
    case 'dependentRequired':
      return `is required when ${error.params.property} is given`;
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
    case 'exclusiveMinimum':
    case 'minimum':
    case 'maximum':
      if (schema.exclusiveMinimum !== undefined) {
        return `must be greater than ${schema.exclusiveMinimum}${schema.maximum !== undefined ? ` and at most ${schema.maximum}` : ''}`;
      }
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
