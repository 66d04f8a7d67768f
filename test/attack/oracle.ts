/**
 * What PRODUCT.md says the answer to a request must be, written independently of the service's
 * own validator so that the fuzz tests compare two readings of the contract, not one with itself.
 */
export const MAX_BODY_BYTES = 16 * 1024;

/**
 * Trims a header value the way HTTP does: only SP and HTAB are optional whitespace (RFC 9110
 * §5.5, §5.6.3). `String.prototype.trim()` also strips U+00A0 and the other Unicode spaces,
 * which are part of the value on the wire (obs-text), so the oracle must not use it on headers.
 */
export const trimOws = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, '');

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const codePoints = (text: string) => [...text].length;
const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

export type BodyVerdict =
  | { kind: 'malformed' } // 400
  | { kind: 'invalid' } // 422
  | { kind: 'valid'; value: Record<string, unknown> };

/** Parses a body as the contract reads it: malformed JSON or wrong top-level shape is a 400. */
function parseRoot(text: string, root: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || !Object.hasOwn(parsed, root) || !isObject(parsed[root])) return undefined;
  return parsed[root] as Record<string, unknown>;
}

const GENERATOR_DEFAULTS = { buffer_type: 'default', description: '', prefix: '', status: 'active' };
const GENERATOR_FIELDS = ['generation_type', 'buffer_type', 'code_length', 'description', 'prefix', 'store_id', 'status'];

export function judgeCodeGenerator(text: string): BodyVerdict {
  const resource = parseRoot(text, 'code_generator');
  if (!resource) return { kind: 'malformed' };
  const ok =
    Object.keys(resource).every((key) => GENERATOR_FIELDS.includes(key)) &&
    ['tillgate', 'numeric'].includes(resource.generation_type as string) &&
    (!Object.hasOwn(resource, 'buffer_type') || resource.buffer_type === 'default') &&
    isInteger(resource.code_length) &&
    resource.code_length >= 4 &&
    resource.code_length <= 32 &&
    (!Object.hasOwn(resource, 'description') ||
      (typeof resource.description === 'string' && codePoints(resource.description) <= 255)) &&
    (!Object.hasOwn(resource, 'prefix') || (typeof resource.prefix === 'string' && /^[A-Z0-9-]{0,16}$/.test(resource.prefix))) &&
    isInteger(resource.store_id) &&
    resource.store_id >= 1 &&
    (!Object.hasOwn(resource, 'status') || resource.status === 'active' || resource.status === 'inactive');
  return ok ? { kind: 'valid', value: { ...GENERATOR_DEFAULTS, ...resource } } : { kind: 'invalid' };
}

/** Two generator requests are "the same" for an Idempotency-Key when their values are. */
export const generatorFingerprint = (value: Record<string, unknown>) =>
  JSON.stringify(Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b))));

const VOID_OPTIONAL = [
  'occurred_at',
  'business_date',
  'register_id',
  'operator_id',
  'till_id',
  'table_id',
  'posagent_version',
  'pos_vendor',
  'pos_version',
  'receipt_id',
];

/** `undefined` where the oracle does not decide (date formats it does not model). */
export function judgeVoid(text: string): BodyVerdict | { kind: 'undecided' } {
  const resource = parseRoot(text, 'transaction');
  if (!resource) return { kind: 'malformed' };
  const present = (key: string) => Object.hasOwn(resource, key) && resource[key] !== null;
  const required = (key: string) =>
    present(key) && typeof resource[key] === 'string' && codePoints(resource[key] as string) >= 1 && codePoints(resource[key] as string) <= 128;
  if (!required('site_id') || !required('pos_transaction_id')) return { kind: 'invalid' };
  for (const key of VOID_OPTIONAL) {
    if (!present(key)) continue;
    const value = resource[key];
    if (typeof value !== 'string' || codePoints(value) > 128) return { kind: 'invalid' };
    if (key === 'business_date' && !isDate(value)) return { kind: 'invalid' };
    if (key === 'occurred_at' && !/^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) {
      return { kind: 'invalid' };
    }
    if (key === 'occurred_at' && !isPlausibleDateTime(value)) return { kind: 'undecided' };
  }
  return { kind: 'valid', value: resource };
}

function isDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return month >= 1 && month <= 12 && day >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Well-formed date-times the generators make: a real date, hours, minutes, seconds in range. */
function isPlausibleDateTime(text: string): boolean {
  const [date = '', rest = ''] = text.split(/[Tt]/);
  const [hh, mm, ss] = rest.slice(0, 8).split(':').map(Number);
  return isDate(date) && hh! <= 23 && mm! <= 59 && ss! <= 59 && !/[+-](2[4-9]|[3-9]\d):|:[6-9]\d$/.test(rest);
}

/** `application/json` or `+json`, with no charset or a UTF-8 one. */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return true;
  const [type = '', ...parameters] = value.split(';').map((p) => trimOws(p).toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  const charset = parameters.map((p) => p.replace(/[ \t]*=[ \t]*/, '=')).find((p) => p.startsWith('charset='));
  return charset === undefined || ['charset=utf-8', 'charset=utf8', 'charset="utf-8"'].includes(charset);
}

/** The event id a path reaches, or why not: `no-route` (gateway 404) or `bad-id` (400). */
export function eventPathTarget(path: string): { kind: 'no-route' } | { kind: 'bad-id' } | { kind: 'id'; id: number } {
  const { pathname } = new URL(path, 'http://localhost');
  const match = /^\/v1\.0\/events\/([^/]+)$/.exec(pathname);
  if (!match) return { kind: 'no-route' };
  let decoded = match[1]!;
  try {
    decoded = decodeURIComponent(decoded);
  } catch {
    /* kept as sent */
  }
  if (!/^[1-9]\d*$/.test(decoded) || !Number.isSafeInteger(Number(decoded))) return { kind: 'bad-id' };
  return { kind: 'id', id: Number(decoded) };
}
