import type { Problem } from './errors.ts';

/**
 * A small declarative validator for request bodies of the shape `{ "<root>": { …fields } }`.
 * Rules are plain data, so the same declaration can describe the body in the OpenAPI document.
 * Every problem is reported (not only the first), each naming its field.
 */
export type FieldRule = StringRule | IntegerRule;

interface CommonRule {
  readonly required?: boolean;
  readonly description?: string;
}

export interface StringRule extends CommonRule {
  readonly type: 'string';
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly enum?: readonly string[];
  readonly pattern?: RegExp;
  /** How to describe `pattern` to a person. */
  readonly patternHint?: string;
  readonly format?: 'date-time' | 'date';
  readonly default?: string;
}

export interface IntegerRule extends CommonRule {
  readonly type: 'integer';
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: number;
}

export interface BodySchema {
  /** The one top-level key holding the resource, e.g. `code_generator`. */
  readonly root: string;
  readonly fields: Readonly<Record<string, FieldRule>>;
  /** `reject`: unknown keys are a 422 naming the key; `ignore`: they are dropped. */
  readonly unknownKeys: 'reject' | 'ignore';
  /** Keys the server owns; sending one is a 422 naming it. */
  readonly readOnly?: readonly string[];
  /** Treat `null` as an absent optional field (older clients send nulls). */
  readonly nullMeansAbsent?: boolean;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

/** The body is not an object holding an object under `root`: a 400, not a 422. */
export function hasTopLevelShape(body: unknown, root: string): body is Record<string, Record<string, unknown>> {
  if (!isPlainObject(body)) return false;
  return Object.hasOwn(body, root) && isPlainObject(body[root]);
}

export function validateResource<T>(schema: BodySchema, resource: Record<string, unknown>): ValidationResult<T> {
  const problems: Problem[] = [];
  const value: Record<string, unknown> = {};
  const at = (key: string) => `${schema.root}.${key}`;

  for (const key of Object.keys(resource)) {
    if (schema.readOnly?.includes(key)) {
      problems.push({ message: `${at(key)} is read-only and cannot be set`, field: at(key) });
    } else if (!Object.hasOwn(schema.fields, key) && schema.unknownKeys === 'reject') {
      problems.push({ message: `${at(key)} is not a known field`, field: at(key) });
    }
  }

  for (const [key, rule] of Object.entries(schema.fields)) {
    let input = Object.hasOwn(resource, key) ? resource[key] : undefined;
    if (input === null && schema.nullMeansAbsent) input = undefined;
    if (input === undefined) {
      if (rule.required) problems.push({ message: `${at(key)} is required`, field: at(key) });
      else if (rule.default !== undefined) value[key] = rule.default;
      continue;
    }
    const problem = rule.type === 'string' ? checkString(rule, input) : checkInteger(rule, input);
    if (problem) problems.push({ message: `${at(key)} ${problem}`, field: at(key) });
    else value[key] = input;
  }

  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: value as T };
}

function checkString(rule: StringRule, input: unknown): string | undefined {
  if (typeof input !== 'string') return 'must be a string';
  const length = codePointLength(input);
  if (rule.minLength !== undefined && length < rule.minLength) {
    return rule.minLength === 1 ? 'must not be empty' : `must be at least ${rule.minLength} characters`;
  }
  if (rule.maxLength !== undefined && length > rule.maxLength) {
    return `must be at most ${rule.maxLength} characters`;
  }
  if (rule.enum && !rule.enum.includes(input)) {
    return `must be one of ${rule.enum.map((v) => `"${v}"`).join(', ')}`;
  }
  if (rule.pattern && !rule.pattern.test(input)) return `must be ${rule.patternHint ?? `of the form ${rule.pattern}`}`;
  if (rule.format === 'date-time' && !isRfc3339DateTime(input)) {
    return 'must be an RFC 3339 date-time such as 2026-11-21T14:03:00Z';
  }
  if (rule.format === 'date' && !isCalendarDate(input)) return 'must be a date of the form YYYY-MM-DD';
  return undefined;
}

function checkInteger(rule: IntegerRule, input: unknown): string | undefined {
  if (typeof input !== 'number' || !Number.isSafeInteger(input)) return 'must be an integer';
  if (rule.minimum !== undefined && input < rule.minimum) {
    return rule.maximum !== undefined
      ? `must be between ${rule.minimum} and ${rule.maximum}`
      : `must be at least ${rule.minimum}`;
  }
  if (rule.maximum !== undefined && input > rule.maximum) {
    return rule.minimum !== undefined
      ? `must be between ${rule.minimum} and ${rule.maximum}`
      : `must be at most ${rule.maximum}`;
  }
  return undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

export function isCalendarDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function isRfc3339DateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (!match || !isCalendarDate(match[1]!)) return false;
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4])];
  if (hour > 23 || minute > 59 || second > 60) return false;
  if (match[7] !== undefined && (Number(match[7]) > 23 || Number(match[8]) > 59)) return false;
  return true;
}

/** The same rules as JSON Schema (2020-12, as OpenAPI 3.1 uses), for the API description. */
export function toJsonSchema(schema: BodySchema): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [key, rule] of Object.entries(schema.fields)) {
    const property: Record<string, unknown> =
      rule.type === 'string'
        ? {
            type: schema.nullMeansAbsent && !rule.required ? ['string', 'null'] : 'string',
            ...(rule.minLength !== undefined ? { minLength: rule.minLength } : {}),
            ...(rule.maxLength !== undefined ? { maxLength: rule.maxLength } : {}),
            ...(rule.enum ? { enum: [...rule.enum] } : {}),
            ...(rule.pattern ? { pattern: rule.pattern.source } : {}),
            ...(rule.format ? { format: rule.format } : {}),
          }
        : {
            type: 'integer',
            ...(rule.minimum !== undefined ? { minimum: rule.minimum } : {}),
            maximum: rule.maximum ?? Number.MAX_SAFE_INTEGER,
          };
    if (rule.default !== undefined) property.default = rule.default;
    if (rule.description) property.description = rule.description;
    properties[key] = property;
  }
  for (const key of schema.readOnly ?? []) {
    properties[key] = { description: 'Read-only: sending it answers 422.', not: {} };
  }
  const required = Object.entries(schema.fields).filter(([, rule]) => rule.required).map(([key]) => key);
  return {
    type: 'object',
    required: [schema.root],
    properties: {
      [schema.root]: {
        type: 'object',
        required,
        properties,
        additionalProperties: schema.unknownKeys === 'ignore',
      },
    },
  };
}
