import { createHash } from 'node:crypto';
import type { WireCall } from './proxy.ts';
import { getAt, type Fill, type HttpInput, type Path, type Plan, type Source, type Step } from './replay.ts';

/**
 * Builds a replay plan (see replay.ts) from two recordings of the real handler serving two
 * requests of the same scenario. Both must make the same calls in the same order; any value
 * that differs between them is a hole, and its source is found by looking where the value of the
 * first recording came from and checking the same holds in the second.
 */
export interface Recording {
  readonly input: HttpInput;
  readonly calls: readonly WireCall[];
  readonly answer: Plan['answer'];
  /** Epoch milliseconds when the call was made, for timestamps relative to now. */
  readonly at: number;
}

const COMMANDS: Record<string, string> = {
  GetItem: 'GetCommand',
  PutItem: 'PutCommand',
  UpdateItem: 'UpdateCommand',
  DeleteItem: 'DeleteCommand',
  Query: 'QueryCommand',
  Scan: 'ScanCommand',
  BatchGetItem: 'BatchGetCommand',
  BatchWriteItem: 'BatchWriteCommand',
  TransactGetItems: 'TransactGetCommand',
  TransactWriteItems: 'TransactWriteCommand',
};

/** Attribute-value maps on the wire, and lists of them, by the field names DynamoDB uses. */
const MAPS = new Set(['Key', 'Item', 'ExpressionAttributeValues', 'ExclusiveStartKey', 'Attributes', 'LastEvaluatedKey']);
const LISTS = new Set(['Items', 'Keys']);

/** One attribute value of the wire format as a plain value (numbers as JavaScript numbers). */
function fromAttribute(value: Record<string, any>): unknown {
  if ('S' in value) return value.S;
  if ('N' in value) return Number(value.N);
  if ('BOOL' in value) return value.BOOL;
  if ('NULL' in value) return null;
  if ('M' in value) return unmarshall(value.M);
  if ('L' in value) return (value.L as Record<string, any>[]).map(fromAttribute);
  if ('SS' in value) return new Set(value.SS);
  if ('NS' in value) return new Set((value.NS as string[]).map(Number));
  if ('B' in value) return Buffer.from(value.B, 'base64');
  throw new Error(`Unknown attribute value ${JSON.stringify(value)}`);
}

function unmarshall(map: Record<string, any>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, fromAttribute(value)]));
}

/** Wire JSON (`{"id":{"N":"7"}}`) to what a DynamoDBDocumentClient takes and gives (`{id: 7}`). */
export function toDocument(value: unknown, field?: string): unknown {
  if (Array.isArray(value)) {
    if (field && LISTS.has(field)) return value.map((item) => unmarshall(item));
    if (field === 'Responses') return value.map((item) => toDocument(item));
    return value.map((item) => toDocument(item));
  }
  if (value === null || typeof value !== 'object') return value;
  if (field && MAPS.has(field)) return unmarshall(value as Record<string, any>);
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'ConsumedCapacity' || key === 'ReturnConsumedCapacity') continue;
    // BatchGetItem: Responses is { table: [items] }.
    if (field === 'Responses' && Array.isArray(inner)) out[key] = inner.map((item) => unmarshall(item));
    else out[key] = toDocument(inner, key);
  }
  return out;
}

function commandFor(target: string): string {
  const command = COMMANDS[target];
  if (!command) throw new Error(`No document client command for DynamoDB ${target}`);
  return command;
}

type Leaves = Map<string, { path: Path; value: unknown }>;

function leaves(value: unknown, path: Path = [], into: Leaves = new Map()): Leaves {
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) leaves(inner, [...path, Array.isArray(value) ? Number(key) : key], into);
  } else {
    into.set(JSON.stringify(path), { path, value });
  }
  return into;
}

/**
 * The second recording's calls in the first's order, where they differ only in order: calls a
 * handler makes side by side (the codes list's two Queries and its issuance lookups) reach
 * DynamoDB in either order. Each call of `a` takes the first unused call of `b` with its
 * operation, table, index and shape; when one finds none, `b` is returned as recorded (and
 * buildPlan refuses the pair).
 */
function inOrderOf(a: Recording, b: Recording): Recording {
  const signature = (call: WireCall) => {
    const request = call.request as { TableName?: string; IndexName?: string };
    return JSON.stringify([call.target, request.TableName, request.IndexName, [...leaves(toDocument(call.request)).keys()].sort()]);
  };
  const unused = b.calls.map((call) => ({ call, signature: signature(call), taken: false }));
  const calls: WireCall[] = [];
  for (const call of a.calls) {
    const wanted = signature(call);
    const match = unused.find((candidate) => !candidate.taken && candidate.signature === wanted);
    if (!match) return b;
    match.taken = true;
    calls.push(match.call);
  }
  return unused.every((candidate) => candidate.taken) ? { ...b, calls } : b;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export function buildPlan(operationId: string, variant: string, a: Recording, recorded: Recording): Plan {
  const describe = (r: Recording) => r.calls.map((c) => c.target).join(', ');
  const b = inOrderOf(a, recorded);
  if (describe(a) !== describe(b)) {
    throw new Error(`${operationId} (${variant}): two requests of one scenario made different calls: [${describe(a)}] and [${describe(b)}]`);
  }
  const docs = (r: Recording) =>
    r.calls.map((c) => ({ input: toDocument(c.request) as Record<string, unknown>, output: c.status === 200 ? toDocument(c.response) : undefined }));
  const [da, db] = [docs(a), docs(b)];
  // The SDK makes up a ClientRequestToken for every TransactWriteItems that has none; the
  // replaying client will too. Kept only when the handler set one itself (the same in both).
  da.forEach((call, i) => {
    if (call.input.ClientRequestToken !== db[i]!.input.ClientRequestToken) {
      delete call.input.ClientRequestToken;
      delete db[i]!.input.ClientRequestToken;
    }
  });

  const steps: Step[] = a.calls.map((call, index) => {
    const la = leaves(da[index]!.input);
    const lb = leaves(db[index]!.input);
    if ([...la.keys()].sort().join() !== [...lb.keys()].sort().join()) {
      throw new Error(`${operationId} (${variant}): call ${index + 1} (${call.target}) has a different shape in two requests of one scenario`);
    }
    const holes = [];
    for (const [key, { path, value }] of la) {
      const other = lb.get(key)!.value;
      if (Object.is(value, other)) continue;
      holes.push({
        at: path,
        fill: sourceOf(
          value,
          other,
          index,
          a,
          b,
          da.map((d) => d.output),
          db.map((d) => d.output),
          da.map((d) => d.input),
          db.map((d) => d.input),
        ),
      });
    }
    const error = call.status === 200 ? undefined : errorOf(call.response);
    return {
      command: commandFor(call.target),
      target: call.target,
      input: da[index]!.input,
      holes,
      ...(error ? { error } : { output: da[index]!.output }),
    };
  });
  return { operationId, variant, steps, answer: a.answer };
}

function errorOf(response: Record<string, unknown>) {
  const type = String(response.__type ?? 'UnknownError');
  const name = type.split('#').pop()!;
  const message = String(response.Message ?? response.message ?? '');
  // A cancelled transaction's reasons (with the existing item, ReturnValuesOnConditionCheckFailure)
  // stay in wire form: the SDK does not convert an exception's contents, even in the document client.
  return response.CancellationReasons ? { name, message, cancellationReasons: response.CancellationReasons as unknown[] } : { name, message };
}

/** Where a value of the first recording came from, checked against the second. */
function sourceOf(
  value: unknown,
  other: unknown,
  step: number,
  a: Recording,
  b: Recording,
  outputsA: unknown[],
  outputsB: unknown[],
  sentA: unknown[] = [],
  sentB: unknown[] = [],
): Fill {
  const candidates: { source: Source; valueA: unknown; valueB: unknown }[] = [];
  for (const { path, value: v } of leaves(a.input).values()) {
    candidates.push({ source: { from: 'input', path }, valueA: v, valueB: getAt(b.input, path) });
    if (typeof v === 'string') {
      const hash = (s: unknown) => createHash('sha256').update(String(s), 'utf8').digest('hex');
      candidates.push({ source: { from: 'sha256', path }, valueA: hash(v), valueB: hash(getAt(b.input, path)) });
    }
  }
  for (let j = 0; j < step; j++) {
    for (const { path, value: v } of leaves(outputsA[j]).values()) {
      candidates.push({ source: { from: 'output', step: j, path }, valueA: v, valueB: getAt(outputsB[j], path) });
    }
  }
  const exact = candidates.find((c) => Object.is(c.valueA, value) && Object.is(c.valueB, other));
  if (exact) return exact.source;
  // A value an earlier call of the request sent (a code written pending, then finalised). Calls
  // made side by side reach DynamoDB in either order, so the second recording need only have
  // sent its value in some earlier call; the replay follows the first recording's order.
  if (typeof value === 'string' && value.length >= 4) {
    const sentEarlier = (inputs: unknown[], wanted: unknown) =>
      inputs
        .slice(0, step)
        .flatMap((input, j) => [...leaves(input).values()].filter((leaf) => Object.is(leaf.value, wanted)).map((leaf) => ({ step: j, path: leaf.path })));
    const [first] = sentEarlier(sentA, value);
    if (first && sentEarlier(sentB, other).length > 0) return { from: 'sent', step: first.step, path: first.path };
  }
  const converted = candidates.find((c) => String(c.valueA) === String(value) && String(c.valueB) === String(other) && typeof c.valueA !== typeof value);
  if (converted && (typeof value === 'number' || typeof value === 'string'))
    return { from: 'convert', to: typeof value as 'number' | 'string', source: converted.source };

  if (typeof value === 'string' && typeof other === 'string') {
    if (ISO.test(value)) return { from: 'now-iso' };
    // A string built from sources (a key like `7#abc`, a JSON list): split it around them.
    const varying = candidates
      .filter((c) => c.valueA !== c.valueB && (typeof c.valueA === 'string' || typeof c.valueA === 'number') && String(c.valueA).length >= 2)
      .sort((x, y) => String(y.valueA).length - String(x.valueA).length);
    let parts: (string | Fill)[] = [value];
    for (const candidate of varying) {
      const needle = String(candidate.valueA);
      parts = parts.flatMap((part): (string | Fill)[] => {
        if (typeof part !== 'string' || !part.includes(needle)) return [part];
        return part.split(needle).flatMap((piece, i) => (i === 0 ? [piece] : [candidate.source, piece]));
      });
    }
    parts = parts.flatMap((part): (string | Fill)[] => {
      if (typeof part !== 'string') return [part];
      return part.split(/(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)/).map((piece) => (ISO.test(piece) ? { from: 'now-iso' as const } : piece));
    });
    if (parts.some((part) => typeof part !== 'string')) return { from: 'text', parts: parts.filter((p) => p !== '') };
  }
  if (typeof value === 'number') {
    const seconds = a.at / 1000;
    // An expiry or a "now" in epoch seconds: kept at the same distance from the clock.
    if (Math.abs(value - seconds) < 400 * 86_400) return { from: 'now-seconds', offset: Math.round(value - seconds) };
    return { from: 'unique-number', base: value };
  }
  // Nothing explains it (a random id, say): the first recording's value with a fresh suffix.
  return { from: 'text', parts: [String(value), '-', { from: 'random' }] };
}
