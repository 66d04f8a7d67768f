import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { hosts, type HostId } from '#functions/routes';
import { HEADER_LIMITS, HEADERS_TOO_LARGE, SOURCE_RATE_LIMITED, TOKEN_RATE_LIMITED, wafAnswerBody, type WafAnswer } from '../gateway-errors.ts';

export interface TokenRateLimitProps {
  readonly stageName: string;
  /** Requests one token may make per window, across both hosts. */
  readonly limit: number;
  /** Requests without a well-formed X-Auth-Token one source address may make per window. */
  readonly tokenlessLimit: number;
  /** Requests of any kind one source address may make per window; 0: no such rule. */
  readonly sourceLimit: number;
  /** WAF's evaluation window: 60, 120, 300 or 600 seconds. */
  readonly windowSeconds: number;
}

/** The label the per-token counting rule puts on a request whose token is over its limit. */
const TOKEN_OVER_LIMIT = 'tillgate:token-over-limit';
/** The label the per-address counting rules put on a request whose source address is over a limit. */
const SOURCE_OVER_LIMIT = 'tillgate:source-over-limit';
/** The header the limit is keyed on: one counter per token (WAF matches header names in any case). */
const TOKEN_HEADER = 'x-auth-token';
/**
 * A token's form, as functions/http/tokens.ts checks it (`tg_` and 43 base64url characters; a
 * test compares the two). The per-token rule counts only these; the rest is counted per address.
 */
export const WAF_TOKEN_PATTERN = '^tg_[A-Za-z0-9_-]{43}$';

const NONE = [{ priority: 0, type: 'NONE' }];

const wellFormedToken = {
  regexMatchStatement: {
    regexString: WAF_TOKEN_PATTERN,
    // singleHeader is untyped in CDK (\`any\`), so its keys go to the template as written: CloudFormation's spelling.
    fieldToMatch: { singleHeader: { Name: TOKEN_HEADER } },
    textTransformations: NONE,
  },
};

/**
 * Matches exactly the requests whose headers WAF cannot inspect whole (over 8 KB or 200 headers):
 * oversize handling MATCH, and a size no header can reach within those limits.
 */
const headersOversize = {
  sizeConstraintStatement: {
    fieldToMatch: { headers: { matchPattern: { all: {} }, matchScope: 'ALL', oversizeHandling: 'MATCH' } },
    comparisonOperator: 'GT',
    size: HEADER_LIMITS.bytes,
    textTransformations: NONE,
  },
};

/**
 * The stage's guard rails in WAF: one regional web ACL for both stages, so that no token, no
 * source address and no request WAF cannot read whole spends the stage's throttle for every shop
 * (docs/security.md, "Per-token limits (AWS)").
 *
 * - `HeadersOversize<Host>` (first): a request whose headers WAF cannot inspect whole is blocked
 *   with 400, never passed uncounted (a token past the 200th header or the 8th KB is out of WAF's
 *   sight).
 * - `PerToken` counts requests per well-formed X-Auth-Token value (a rate-based rule with a custom
 *   aggregation key) and labels those over `limit`.
 * - `PerSourceWithoutToken` counts, per source address, the requests whose X-Auth-Token is
 *   missing or malformed (no key of its own: WAF would not count them at all) and labels those
 *   over `tokenlessLimit`.
 * - `PerSource` (unless `sourceLimit` is 0) counts every request per source address and labels
 *   those over `sourceLimit`: a flood of random well-formed tokens (each one a fresh per-token
 *   counter) from one address is limited too.
 * - `PerTokenLimit<Host>` and `PerSourceLimit<Host>` block a labelled request with 429,
 *   `Retry-After` and that host's error body; a host's rule matches its version prefix, the last
 *   one takes the rest. Counting rules use Count so that one counter serves both hosts' answers.
 *
 * Sampled requests are off: WAF would keep whole requests, X-Auth-Token included, for the console.
 * Metrics are on (blocked and counted requests per rule).
 */
export class TokenRateLimit extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: TokenRateLimitProps) {
    super(scope, id);
    const metric = (name: string) => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: false,
      metricName: `tillgate-${props.stageName}-${name}`,
    });
    const hostIds = Object.keys(hosts) as HostId[];
    const answers = { 'token-rate-limited': TOKEN_RATE_LIMITED, 'source-rate-limited': SOURCE_RATE_LIMITED, 'headers-too-large': HEADERS_TOO_LARGE };
    type AnswerName = keyof typeof answers;
    const pascalHost = (host: HostId) => `${host.charAt(0).toUpperCase()}${host.slice(1)}`;
    const rules: Omit<CfnWebACL.RuleProperty, 'priority'>[] = [];

    /** One block rule per host, the core host's by its version prefix, the last host's for the rest. */
    const blockOnEachHost = (name: string, metricName: string, statement: object, answer: AnswerName, retryAfter?: number) => {
      hostIds.forEach((host, index) => {
        const onHost = {
          byteMatchStatement: {
            fieldToMatch: { uriPath: {} },
            positionalConstraint: 'CONTAINS',
            searchString: `${hosts[host].versionPrefix}/`,
            textTransformations: NONE,
          },
        };
        rules.push({
          name: `${name}${pascalHost(host)}`,
          statement: index === hostIds.length - 1 ? statement : { andStatement: { statements: [statement, onHost] } },
          action: {
            block: {
              customResponse: {
                responseCode: (answers[answer] as WafAnswer).statusCode,
                customResponseBodyKey: `${host}-${answer}`,
                responseHeaders: [
                  ...(retryAfter ? [{ name: 'Retry-After', value: String(retryAfter) }] : []),
                  { name: 'Cache-Control', value: 'no-store' },
                  { name: 'X-Content-Type-Options', value: 'nosniff' },
                ],
              },
            },
          },
          visibilityConfig: metric(`${metricName}-${host}`),
        });
      });
    };
    const counting = (name: string, metricName: string, rateBasedStatement: CfnWebACL.RateBasedStatementProperty, label: string) =>
      rules.push({ name, statement: { rateBasedStatement }, action: { count: {} }, ruleLabels: [{ name: label }], visibilityConfig: metric(metricName) });
    const window = { evaluationWindowSec: props.windowSeconds };

    blockOnEachHost('HeadersOversize', 'headers-oversize', headersOversize, 'headers-too-large');
    counting(
      'PerToken',
      'per-token',
      {
        limit: props.limit,
        ...window,
        aggregateKeyType: 'CUSTOM_KEYS',
        customKeys: [{ header: { name: TOKEN_HEADER, textTransformations: NONE } }],
        scopeDownStatement: wellFormedToken,
      },
      TOKEN_OVER_LIMIT,
    );
    counting(
      'PerSourceWithoutToken',
      'per-source-without-token',
      { limit: props.tokenlessLimit, ...window, aggregateKeyType: 'IP', scopeDownStatement: { notStatement: { statement: wellFormedToken } } },
      SOURCE_OVER_LIMIT,
    );
    if (props.sourceLimit > 0) counting('PerSource', 'per-source', { limit: props.sourceLimit, ...window, aggregateKeyType: 'IP' }, SOURCE_OVER_LIMIT);
    const labelled = (key: string) => ({ labelMatchStatement: { scope: 'LABEL', key } });
    blockOnEachHost('PerTokenLimit', 'per-token-limit', labelled(TOKEN_OVER_LIMIT), 'token-rate-limited', props.windowSeconds);
    blockOnEachHost('PerSourceLimit', 'per-source-limit', labelled(SOURCE_OVER_LIMIT), 'source-rate-limited', props.windowSeconds);

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description:
        `tillgate ${props.stageName}: per ${props.windowSeconds} s at most ${props.limit} requests per X-Auth-Token, ` +
        `${props.tokenlessLimit} without a well-formed token per source address` +
        (props.sourceLimit > 0 ? `, ${props.sourceLimit} in all per source address` : '') +
        ', headers WAF cannot inspect whole refused',
      defaultAction: { allow: {} },
      visibilityConfig: metric('web-acl'),
      customResponseBodies: Object.fromEntries(
        hostIds.flatMap((host) =>
          (Object.keys(answers) as AnswerName[]).map((answer) => [
            `${host}-${answer}`,
            { contentType: 'APPLICATION_JSON', content: wafAnswerBody(host, answers[answer]) },
          ]),
        ),
      ),
      rules: rules.map((rule, priority) => ({ ...rule, priority })),
    });
  }
}
