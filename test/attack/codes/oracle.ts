import { codePoints, envelope, isObject, parseRoot, positiveInteger, type BodyVerdict, type ResourceVerdict } from '../http/oracle.ts';

/**
 * What PRODUCT.md says the answers of the code routes must be (code generators, their codes),
 * written from the contract and independently of the service's schemas and validators, so that
 * codes/fuzz.test.ts compares two readings of the contract, not one with itself.
 */
const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

const GENERATOR_DEFAULTS = { buffer_type: 'default', description: '', prefix: '', status: 'active' };
const GENERATOR_FIELDS = ['generation_type', 'buffer_type', 'code_length', 'description', 'prefix', 'store_id', 'status'];

export function judgeCodeGenerator(text: string): ResourceVerdict {
  const resource = parseRoot(text, 'code_generator');
  if (!resource) return { kind: 'malformed' };
  const ok =
    Object.keys(resource).every((key) => GENERATOR_FIELDS.includes(key)) &&
    ['tillgate', 'numeric'].includes(resource.generation_type as string) &&
    (!Object.hasOwn(resource, 'buffer_type') || resource.buffer_type === 'default') &&
    isInteger(resource.code_length) &&
    resource.code_length >= 4 &&
    resource.code_length <= 32 &&
    (!Object.hasOwn(resource, 'description') || (typeof resource.description === 'string' && codePoints(resource.description) <= 255)) &&
    (!Object.hasOwn(resource, 'prefix') || (typeof resource.prefix === 'string' && /^[A-Z0-9-]{0,16}$/.test(resource.prefix))) &&
    isInteger(resource.store_id) &&
    resource.store_id >= 1 &&
    (!Object.hasOwn(resource, 'status') || resource.status === 'active' || resource.status === 'inactive');
  return ok ? { kind: 'valid', value: { ...GENERATOR_DEFAULTS, ...resource } } : { kind: 'invalid' };
}

/** Two generator requests are "the same" for an Idempotency-Key when their values are. */
export const generatorFingerprint = (value: Record<string, unknown>) =>
  JSON.stringify(Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b))));

/** Decodes a path segment as the gateway does; a malformed escape stays as sent. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

type CodegenRoute = 'getCodeGenerator' | 'updateCodeGenerator' | 'issueCodes' | 'listCodes' | 'getCode';

export type CodegenTarget =
  | { kind: 'no-route' } // the gateway's 404
  | { kind: 'bad-id' } // 400
  | { kind: 'ok'; route: CodegenRoute; id: number; code?: string };

/** Which operation a request reaches under /v1.0/codegen/{id}…, and with which id and code. */
export function codegenTarget(method: string, path: string): CodegenTarget {
  const { pathname } = new URL(path, 'http://localhost');
  const segments = pathname.split('/').slice(1);
  if (segments[0] !== 'v1.0' || segments[1] !== 'codegen' || segments.length < 3) return { kind: 'no-route' };
  const rest = segments.slice(2);
  if (rest.some((segment) => segment === '')) return { kind: 'no-route' };
  let route: CodegenRoute | undefined;
  if (rest.length === 1 && method === 'GET') route = 'getCodeGenerator';
  else if (rest.length === 1 && method === 'PATCH') route = 'updateCodeGenerator';
  else if (rest.length === 2 && rest[1] === 'codes' && method === 'POST') route = 'issueCodes';
  else if (rest.length === 2 && rest[1] === 'codes' && method === 'GET') route = 'listCodes';
  else if (rest.length === 3 && rest[1] === 'codes' && method === 'GET') route = 'getCode';
  if (!route) return { kind: 'no-route' };
  const id = positiveInteger(decodeSegment(rest[0]!));
  if (id === undefined) return { kind: 'bad-id' };
  return route === 'getCode' ? { kind: 'ok', route, id, code: decodeSegment(rest[2]!) } : { kind: 'ok', route, id };
}

/**
 * The issued code a typed code names: "letters in any case, as a cashier may type them". Only
 * ASCII letters fold (a code's characters are A-Z, 0-9 and -); anything else names no code.
 */
export function codeAsIssued(typed: string, issued: ReadonlySet<string>): string | undefined {
  if (!/^[\x21-\x7e]+$/.test(typed)) return undefined;
  const upper = typed.replace(/[a-z]/g, (c) => c.toUpperCase());
  return issued.has(upper) ? upper : undefined;
}

/** PATCH /v1.0/codegen/{id}: `{"code_generator":{…}}`, only `status` and `description`. */
export function judgePatch(bytes: Buffer, contentType: string | undefined): BodyVerdict {
  const read = envelope(bytes, contentType);
  if ('verdict' in read) return read.verdict;
  const parsed = read.parsed;
  if (!isObject(parsed) || !Object.hasOwn(parsed, 'code_generator') || !isObject(parsed.code_generator)) return { kind: 'malformed' };
  const resource = parsed.code_generator;
  const wrong = new Set<string>();
  for (const key of Object.keys(resource)) {
    const value = resource[key];
    if (key === 'status') {
      if (value !== 'active' && value !== 'inactive') wrong.add(`code_generator.${key}`);
    } else if (key === 'description') {
      if (typeof value !== 'string' || codePoints(value) > 255) wrong.add(`code_generator.${key}`);
    } else wrong.add(`code_generator.${key}`);
  }
  return wrong.size > 0 ? { kind: 'invalid', fields: wrong } : { kind: 'valid', value: resource };
}

/** POST /v1.0/codegen/{id}/codes: `{"count":n}`, n an integer 1–1000, nothing else. */
export function judgeIssue(bytes: Buffer, contentType: string | undefined): BodyVerdict {
  const read = envelope(bytes, contentType);
  if ('verdict' in read) return read.verdict;
  const parsed = read.parsed;
  if (!isObject(parsed)) return { kind: 'malformed' };
  const wrong = new Set<string>();
  for (const key of Object.keys(parsed)) if (key !== 'count') wrong.add(key);
  const count = parsed.count;
  if (!(typeof count === 'number' && Number.isInteger(count) && count >= 1 && count <= 1000)) wrong.add('count');
  return wrong.size > 0 ? { kind: 'invalid', fields: wrong } : { kind: 'valid', value: parsed };
}

/** The characters a generator's generated part is made of. */
export const ALPHABETS = { tillgate: '23456789ABCDEFGHJKLMNPQRSTUVWXYZ', numeric: '0123456789' } as const;

/** A code as the generator must have made it: its prefix, then code_length characters of its alphabet. */
export function isCodeOf(code: string, generator: { prefix: string; code_length: number; generation_type: keyof typeof ALPHABETS }): boolean {
  if (!code.startsWith(generator.prefix)) return false;
  const generated = code.slice(generator.prefix.length);
  return generated.length === generator.code_length && [...generated].every((c) => ALPHABETS[generator.generation_type].includes(c));
}
