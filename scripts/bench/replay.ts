import { createHash } from 'node:crypto';

/**
 * The baselines' "bare handler": it makes the DynamoDB requests tillgate was seen to make for the
 * same scenario, in the same order, through a DynamoDBDocumentClient, and answers with the body
 * tillgate answered. No middleware, no validation, no logging.
 *
 * A plan (see plan.ts) is built from two recordings of the real handler taken through the counting
 * proxy, so the baselines follow the code as it changes. Values that differed between the two
 * recordings are holes, filled on every call from where they came from: the request (path, header,
 * body), an earlier answer of DynamoDB (an id from a counter), a hash of the token, or the clock.
 *
 * This file is bundled into the reference Lambda bundles: it imports nothing but node:crypto,
 * and the command classes are passed in, so a bundle carries only the commands its plan uses.
 */
export type Path = readonly (string | number)[];

export type Source =
  | { readonly from: 'input'; readonly path: Path }
  | { readonly from: 'output'; readonly step: number; readonly path: Path }
  /** A value an earlier call of the same request sent (a code written, then finalised). */
  | { readonly from: 'sent'; readonly step: number; readonly path: Path }
  | { readonly from: 'sha256'; readonly path: Path };

export type Fill =
  | Source
  | { readonly from: 'text'; readonly parts: readonly (string | Fill)[] }
  | { readonly from: 'random' }
  /** A path id ('17') that the handler stores as a number (17), or the other way round. */
  | { readonly from: 'convert'; readonly to: 'number' | 'string'; readonly source: Source }
  | { readonly from: 'now-iso' }
  | { readonly from: 'now-seconds'; readonly offset: number }
  | { readonly from: 'unique-number'; readonly base: number };

interface Hole {
  readonly at: Path;
  readonly fill: Fill;
}

export interface Step {
  /** Document client command class: `GetCommand`, `TransactWriteCommand`, … */
  readonly command: string;
  /** The DynamoDB target on the wire (`GetItem`, …), for the checks and the report. */
  readonly target: string;
  /** Input of the first recording, in document shape (plain values, not attribute values). */
  readonly input: unknown;
  readonly holes: readonly Hole[];
  /** What DynamoDB answered in the first recording (document shape), for stubbed clients. */
  readonly output?: unknown;
  /** The error DynamoDB answered instead, if it did. */
  readonly error?: { readonly name: string; readonly message: string; readonly cancellationReasons?: readonly unknown[] };
}

export interface Plan {
  readonly operationId: string;
  readonly variant: string;
  readonly steps: readonly Step[];
  /** tillgate's answer, given back as is. */
  readonly answer: { readonly statusCode: number; readonly headers: Record<string, string>; readonly body: string };
}

/** What a handler sees of an HTTP request, in one shape for the Lambda event and node:http. */
export interface HttpInput {
  readonly path: readonly string[];
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export function httpInput(
  path: string,
  query: Record<string, string | undefined>,
  headers: Record<string, string | undefined>,
  body: string | null | undefined,
): HttpInput {
  const lower: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') lower[name.toLowerCase()] = value;
  let parsed: unknown = body ?? null;
  if (body) {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = body;
    }
  }
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) if (typeof value === 'string') params[name] = value;
  return { path: path.split('/'), query: params, headers: lower, body: parsed };
}

export type Commands = Record<string, new (input: any) => unknown>;
export type Send = (command: any) => Promise<unknown>;

export function replayer(plan: Plan, commands: Commands, send: Send): (input: HttpInput) => Promise<Plan['answer']> {
  for (const step of plan.steps) {
    if (!commands[step.command]) throw new Error(`replay: no ${step.command} given for ${plan.operationId}`);
  }
  const counter = { next: Math.floor(Math.random() * 1e6) * 1e6 };
  return async (input) => {
    const unique: Unique = { counter, seen: new Map() };
    const outputs: unknown[] = [];
    const sent: unknown[] = [];
    for (const step of plan.steps) {
      const commandInput = structuredClone(step.input);
      for (const hole of step.holes) setAt(commandInput, hole.at, fill(hole.fill, input, outputs, unique, sent));
      sent.push(commandInput);
      let output: unknown;
      try {
        output = await send(new commands[step.command]!(commandInput));
      } catch (error) {
        // The recorded run met this error too (a failed condition, say): it is part of the work.
        if (!step.error || (error as Error).name !== step.error.name) throw error;
      }
      outputs.push(output);
    }
    return plan.answer;
  };
}

/**
 * Fresh numbers for one replayed call: a recorded number that nothing explained gets one, the same
 * wherever it appears in the call (an issuance id on each of its codes, then in the finalisation's
 * condition), as the handler used one id there.
 */
interface Unique {
  readonly counter: { next: number };
  readonly seen: Map<number, number>;
}

function fill(how: Fill, input: HttpInput, outputs: unknown[], unique: Unique, sent: unknown[] = []): unknown {
  switch (how.from) {
    case 'input':
      return getAt(input, how.path);
    case 'output':
      return getAt(outputs[how.step], how.path);
    case 'sent':
      return getAt(sent[how.step], how.path);
    case 'sha256':
      return createHash('sha256')
        .update(String(getAt(input, how.path)), 'utf8')
        .digest('hex');
    case 'now-iso':
      return new Date().toISOString();
    case 'now-seconds':
      return Math.floor(Date.now() / 1000) + how.offset;
    case 'convert': {
      const value = fill(how.source, input, outputs, unique, sent);
      return how.to === 'number' ? Number(value) : String(value);
    }
    case 'random':
      return Math.random().toString(36).slice(2, 10);
    case 'unique-number': {
      const fresh = unique.seen.get(how.base) ?? how.base + ++unique.counter.next;
      unique.seen.set(how.base, fresh);
      return fresh;
    }
    case 'text':
      return how.parts.map((part) => (typeof part === 'string' ? part : String(fill(part, input, outputs, unique, sent)))).join('');
  }
}

export function getAt(value: unknown, path: Path): unknown {
  let current: any = value;
  for (const key of path) current = current?.[key];
  return current;
}

function setAt(target: unknown, path: Path, value: unknown): void {
  let current: any = target;
  for (const key of path.slice(0, -1)) current = current[key];
  current[path[path.length - 1]!] = value;
}

/** A bare Lambda handler (API Gateway proxy event in, result out) around a replayer. */
export function lambdaHandler(plan: Plan, commands: Commands, send: Send) {
  const replay = replayer(plan, commands, send);
  return async (event: {
    path: string;
    queryStringParameters?: Record<string, string | undefined> | null;
    headers?: Record<string, string | undefined> | null;
    body?: string | null;
    isBase64Encoded?: boolean;
  }) => {
    // API Gateway passes every body base64-encoded (binary media type */*), as the functions get it.
    const body = event.body && event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const answer = await replay(httpInput(event.path, event.queryStringParameters ?? {}, event.headers ?? {}, body));
    return { statusCode: answer.statusCode, headers: answer.headers, body: answer.body };
  };
}
