import { beforeAll, describe, expect, it } from 'vitest';
import { newToken, TOKEN_SHAPE } from '#http/tokens';
import { WAF_TOKEN_PATTERN } from '../../infra/constructs/token-rate-limit.ts';
import { HEADER_LIMITS } from '../../infra/gateway-errors.ts';
import { fuzzSeed, seededRandom } from '../attack/support.ts';
import { synthesize } from './synth.ts';

/**
 * Forged tokens against the stage's WAF rules, as synthesized: a small evaluator of the web ACL's
 * statements (the kinds the stack uses) runs sample requests through the rules in priority order,
 * with WAF's documented behaviour:
 * - a rate-based rule counts a request that its scope-down statement matches and that has every
 *   aggregation key (a request without the key's header is not counted at all); it matches once
 *   the key's count in the window is over the limit (exact here; WAF's is approximate);
 * - Count adds the rule's labels and goes on, Block answers with the custom response, no match of
 *   any rule allows;
 * - WAF is handed the first 200 headers and the first 8 KB of them (here: names and values
 *   counted); `Headers` with oversize handling MATCH matches a request over either. As the worst
 *   case, a header past those limits is invisible to every rule, the single-header ones included.
 *
 * What it would catch: a rule of the issue missing or keyed wrongly (a flood without a token, or
 * with malformed or random well-formed tokens, from one address allowed for ever), a token hidden
 * past the header limits passed uncounted, a WAF token pattern that no longer matches the tokens.
 */
interface Sample {
  readonly ip: string;
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
}
type Verdict = { readonly allowed: true } | { readonly allowed: false; status: number; body: any; headers: Record<string, string> };

let acl: any;
beforeAll(() => {
  const resources = synthesize().template.toJSON().Resources as Record<string, any>;
  acl = Object.values(resources).find((r) => r.Type === 'AWS::WAFv2::WebACL')!.Properties;
});

function visibleHeaders(sample: Sample) {
  let bytes = 0;
  const visible: (readonly [string, string])[] = [];
  for (const [name, value] of sample.headers) {
    bytes += name.length + value.length;
    if (visible.length >= HEADER_LIMITS.count || bytes > HEADER_LIMITS.bytes) return { visible, oversize: true };
    visible.push([name, value]);
  }
  return { visible, oversize: false };
}

/** A web ACL with its rate counters: one per rule and aggregation key, for one evaluation window. */
function webAcl() {
  const counts = new Map<string, number>();
  const statement = (s: any, request: Sample, labels: Set<string>): boolean => {
    const { visible, oversize } = visibleHeaders(request);
    const header = (name: string) => {
      const values = visible.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
      return values.length ? values.join(',') : undefined;
    };
    if (s.AndStatement) return s.AndStatement.Statements.every((x: any) => statement(x, request, labels));
    if (s.OrStatement) return s.OrStatement.Statements.some((x: any) => statement(x, request, labels));
    if (s.NotStatement) return !statement(s.NotStatement.Statement, request, labels);
    if (s.LabelMatchStatement) return labels.has(s.LabelMatchStatement.Key);
    if (s.ByteMatchStatement) {
      const { FieldToMatch, PositionalConstraint, SearchString, TextTransformations } = s.ByteMatchStatement;
      expect([Object.keys(FieldToMatch), PositionalConstraint, TextTransformations]).toEqual([['UriPath'], 'CONTAINS', [{ Priority: 0, Type: 'NONE' }]]);
      return request.path.includes(SearchString);
    }
    if (s.RegexMatchStatement) {
      const { FieldToMatch, RegexString } = s.RegexMatchStatement;
      const value = header(FieldToMatch.SingleHeader.Name);
      return value !== undefined && new RegExp(RegexString).test(value);
    }
    if (s.SizeConstraintStatement) {
      const { FieldToMatch, ComparisonOperator, Size } = s.SizeConstraintStatement;
      expect([FieldToMatch.Headers?.MatchPattern, FieldToMatch.Headers?.MatchScope, ComparisonOperator]).toEqual([{ All: {} }, 'ALL', 'GT']);
      if (oversize) return FieldToMatch.Headers.OversizeHandling === 'MATCH';
      return visible.some(([name, value]) => name.length > Size || value.length > Size);
    }
    throw new Error(`the evaluator does not know ${Object.keys(s)[0]}: teach it before using the statement in the web ACL`);
  };
  const rateBased = (rule: any, s: any, request: Sample, labels: Set<string>): boolean => {
    if (s.ScopeDownStatement && !statement(s.ScopeDownStatement, request, labels)) return false;
    let key: string | undefined;
    if (s.AggregateKeyType === 'IP') key = request.ip;
    else if (s.AggregateKeyType === 'CUSTOM_KEYS') {
      expect(s.CustomKeys).toHaveLength(1);
      const name = s.CustomKeys[0].Header.Name;
      const values = visibleHeaders(request)
        .visible.filter(([n]) => n.toLowerCase() === name)
        .map(([, v]) => v);
      key = values.length ? values.join(',') : undefined;
    } else throw new Error(`the evaluator does not know the aggregation ${s.AggregateKeyType}`);
    if (key === undefined) return false;
    const id = `${rule.Name} ${key}`;
    const count = (counts.get(id) ?? 0) + 1;
    counts.set(id, count);
    return count > s.Limit;
  };
  return (request: Sample): Verdict => {
    const labels = new Set<string>();
    for (const rule of [...acl.Rules].sort((a, b) => a.Priority - b.Priority)) {
      const matched = rule.Statement.RateBasedStatement
        ? rateBased(rule, rule.Statement.RateBasedStatement, request, labels)
        : statement(rule.Statement, request, labels);
      if (!matched) continue;
      if (rule.Action.Count) for (const label of rule.RuleLabels ?? []) labels.add(label.Name);
      else if (rule.Action.Block) {
        const response = rule.Action.Block.CustomResponse;
        return {
          allowed: false,
          status: response.ResponseCode,
          body: JSON.parse(acl.CustomResponseBodies[response.CustomResponseBodyKey].Content),
          headers: Object.fromEntries(response.ResponseHeaders.map((h: any) => [h.Name, h.Value])),
        };
      } else throw new Error(`rule ${rule.Name}: unexpected action ${JSON.stringify(rule.Action)}`);
    }
    return { allowed: true };
  };
}

const seed = fuzzSeed();
const rng = seededRandom(seed);
const random = () => rng.next();
const core = '/prod/v1.0/events';
const pos = '/prod/v2.0/transactions/void';
const request = (ip: string, path: string, token?: string, padding: (readonly [string, string])[] = []): Sample => ({
  ip,
  path,
  headers: [['Host', 'api.example.com'], ['Content-Type', 'application/json'], ...padding, ...(token === undefined ? [] : [['X-Auth-Token', token] as const])],
});
const randomText = (length: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_- .') =>
  Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
/** Tokens of the right form that no one was given: each is a fresh key for the per-token rule. */
const forgedWellFormed = () => `tg_${randomText(43, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`;
const malformed = () =>
  [
    () => randomText(1 + Math.floor(random() * 80)),
    () => `tg_${randomText(42, 'abc')}`,
    () => `tg_${randomText(44, 'abc')}`,
    () => `tg_${randomText(42, 'abc')}+`,
    () => `TG_${randomText(43, 'abc')}`,
    () => ` ${forgedWellFormed()}`,
    () => '',
  ][Math.floor(random() * 7)]!();

/** How many of `count` requests pass before the first refusal, and that refusal. */
function floodOnce(evaluate: (r: Sample) => Verdict, count: number, make: (i: number) => Sample) {
  for (let i = 0; i < count; i++) {
    const verdict = evaluate(make(i));
    if (!verdict.allowed) return { passed: i, refusal: verdict };
  }
  return { passed: count, refusal: undefined };
}

describe('forged tokens against the synthesized WAF rules', () => {
  it("uses the functions' token pattern (tokens of newToken() pass, near misses do not)", () => {
    expect(WAF_TOKEN_PATTERN).toBe(TOKEN_SHAPE.source);
    const waf = new RegExp(WAF_TOKEN_PATTERN);
    for (let i = 0; i < 200; i++) expect(waf.test(newToken())).toBe(true);
    for (let i = 0; i < 200; i++) {
      const sample = malformed();
      expect(waf.test(sample), JSON.stringify(sample)).toBe(TOKEN_SHAPE.test(sample));
    }
  });

  it('limits requests without a token per source address: 100 pass, the 101st is 429 in the host shape, another address is not affected', () => {
    const evaluate = webAcl();
    const flood = floodOnce(evaluate, 1000, (i) => request('198.51.100.7', i % 2 ? core : pos));
    expect(flood.passed).toBe(100);
    expect(flood.refusal).toMatchObject({ status: 429, headers: { 'Retry-After': '60' } });
    expect(evaluate(request('198.51.100.7', core))).toMatchObject({ status: 429, body: { errors: [{ message: expect.stringContaining('network address') }] } });
    expect(evaluate(request('198.51.100.7', pos))).toMatchObject({
      status: 429,
      body: { transaction: { display_messages: [{ message_id: 'source_rate_limited' }] } },
    });
    expect(evaluate(request('198.51.100.8', core))).toEqual({ allowed: true });
    expect(evaluate(request('198.51.100.7', core, newToken()))).toEqual({ allowed: true });
  });

  it('limits malformed tokens per source address, each one different', () => {
    const evaluate = webAcl();
    const flood = floodOnce(evaluate, 1000, () => request('203.0.113.9', core, malformed()));
    expect(flood.passed).toBe(100);
    expect(flood.refusal).toMatchObject({ status: 429, body: { errors: [{ message: expect.stringContaining('network address') }] } });
  });

  it('limits random well-formed tokens from one address at 1,500 (the all-requests rule); spread over addresses only the stage throttle bounds them', () => {
    const evaluate = webAcl();
    const flood = floodOnce(evaluate, 3000, () => request('192.0.2.44', core, forgedWellFormed()));
    expect(flood.passed).toBe(1500);
    expect(flood.refusal).toMatchObject({ status: 429, body: { errors: [{ message: expect.stringContaining('network address') }] } });
    // What WAF cannot do: 3,000 addresses with a fresh token each are 3,000 fresh keys of every rule.
    const spread = webAcl();
    const many = floodOnce(spread, 3000, (i) => request(`10.${(i >> 8) & 255}.${i & 255}.1`, core, forgedWellFormed()));
    expect(many.passed).toBe(3000);
  });

  it('limits one token at 300 from however many addresses, with the per-token answer', () => {
    const evaluate = webAcl();
    const token = newToken();
    const flood = floodOnce(evaluate, 1000, (i) => request(`10.1.${(i >> 8) & 255}.${i & 255}`, pos, token));
    expect(flood.passed).toBe(300);
    expect(flood.refusal).toMatchObject({ status: 429, body: { transaction: { display_messages: [{ message_id: 'token_rate_limited' }] } } });
  });

  it('refuses with 400 a token hidden past 200 headers or 8 KB of headers, counting nothing; 200 headers and 8 KB pass', () => {
    const evaluate = webAcl();
    const many = Array.from({ length: 210 }, (_, i) => [`X-Pad-${i}`, 'x'] as const);
    const big: [string, string][] = [['X-Pad', 'x'.repeat(8200)]];
    for (const [padding, path] of [
      [many, core],
      [big, pos],
    ] as const) {
      const verdict = evaluate(request('198.51.100.20', path, forgedWellFormed(), [...padding]));
      expect(verdict).toMatchObject({ allowed: false, status: 400 });
      const body = JSON.stringify((verdict as { body: unknown }).body);
      expect(body).toContain('Request headers are too large');
      expect(body.includes('transaction')).toBe(path === pos);
    }
    // A whole request of 200 headers (with its token) and one of 8,192 bytes are inspected as usual.
    const fits = Array.from({ length: 197 }, (_, i) => [`X-Pad-${i}`, 'x'] as const);
    expect(evaluate(request('198.51.100.21', core, newToken(), [...fits]))).toEqual({ allowed: true });
    const used = 'Host'.length + 'api.example.com'.length + 'Content-Type'.length + 'application/json'.length + 'X-Auth-Token'.length + 46 + 'X-Pad'.length;
    expect(evaluate(request('198.51.100.21', core, newToken(), [['X-Pad', 'x'.repeat(HEADER_LIMITS.bytes - used)]]))).toEqual({ allowed: true });
    // Refused before any counter: 2,000 oversize requests from one address leave its counters untouched.
    for (let i = 0; i < 2000; i++) evaluate(request('198.51.100.22', core, undefined, [...many]));
    expect(floodOnce(evaluate, 200, () => request('198.51.100.22', core)).passed).toBe(100);
  });
});
