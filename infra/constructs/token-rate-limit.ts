import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { hosts, type HostId } from '#functions/routes';
import { TOKEN_RATE_LIMITED, tokenRateLimitedBody } from '../gateway-errors.ts';

export interface TokenRateLimitProps {
  readonly stageName: string;
  /** Requests one token may make per window, across both hosts. */
  readonly limit: number;
  /** WAF's evaluation window: 60, 120, 300 or 600 seconds. */
  readonly windowSeconds: number;
}

/** The label the counting rule puts on a request whose token is over its limit. */
const OVER_LIMIT_LABEL = 'tillgate:token-over-limit';
/** The header the limit is keyed on: one counter per token (WAF matches header names in any case). */
const TOKEN_HEADER = 'x-auth-token';

/**
 * The per-token limit: one regional WAF web ACL for both stages, so that one account (or one
 * leaked token) cannot spend the stage's throttle for every shop.
 *
 * - `PerToken` counts requests per X-Auth-Token value (a rate-based rule with a custom aggregation
 *   key) over `windowSeconds`, across both hosts, and labels those over `limit`. Its action is
 *   Count, so one counter serves both hosts, whose answers differ.
 * - `PerTokenLimit<Host>` blocks a labelled request with 429, `Retry-After` and that host's error
 *   body; a host's rule matches its version prefix, the last one takes the rest.
 *
 * Requests without the header are not counted (they answer 401 anyway, and the stage throttle
 * still bounds them). Sampled requests are off: WAF would keep whole requests, X-Auth-Token
 * included, for the console. Metrics are on (blocked and counted requests per rule).
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
    const bodyKey = (host: HostId) => `${host}-token-rate-limited`;
    const overLimit = { labelMatchStatement: { scope: 'LABEL', key: OVER_LIMIT_LABEL } };

    const blockRules: CfnWebACL.RuleProperty[] = hostIds.map((host, index) => {
      const last = index === hostIds.length - 1;
      const onHost = {
        byteMatchStatement: {
          fieldToMatch: { uriPath: {} },
          positionalConstraint: 'CONTAINS',
          searchString: `${hosts[host].versionPrefix}/`,
          textTransformations: [{ priority: 0, type: 'NONE' }],
        },
      };
      return {
        name: `PerTokenLimit${host.charAt(0).toUpperCase()}${host.slice(1)}`,
        priority: index + 1,
        statement: last ? overLimit : { andStatement: { statements: [overLimit, onHost] } },
        action: {
          block: {
            customResponse: {
              responseCode: TOKEN_RATE_LIMITED.statusCode,
              customResponseBodyKey: bodyKey(host),
              responseHeaders: [
                { name: 'Retry-After', value: String(props.windowSeconds) },
                { name: 'Cache-Control', value: 'no-store' },
                { name: 'X-Content-Type-Options', value: 'nosniff' },
              ],
            },
          },
        },
        visibilityConfig: metric(`per-token-limit-${host}`),
      };
    });

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      description: `tillgate ${props.stageName}: at most ${props.limit} requests per ${props.windowSeconds} s per X-Auth-Token`,
      defaultAction: { allow: {} },
      visibilityConfig: metric('web-acl'),
      customResponseBodies: Object.fromEntries(
        hostIds.map((host) => [bodyKey(host), { contentType: 'APPLICATION_JSON', content: tokenRateLimitedBody(host) }]),
      ),
      rules: [
        {
          name: 'PerToken',
          priority: 0,
          statement: {
            rateBasedStatement: {
              limit: props.limit,
              evaluationWindowSec: props.windowSeconds,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: TOKEN_HEADER, textTransformations: [{ priority: 0, type: 'NONE' }] } }],
            },
          },
          action: { count: {} },
          ruleLabels: [{ name: OVER_LIMIT_LABEL }],
          visibilityConfig: metric('per-token'),
        },
        ...blockRules,
      ],
    });
  }
}
