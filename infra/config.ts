import type { Node } from 'constructs';
import { hosts, type HostId } from '#functions/routes';
import { secretIds, secrets, type SecretId } from '#functions/secrets';

/**
 * Deployment settings, read once from CDK context (`-c key=value` or cdk.json). Every knob an
 * operator may turn is here, with its default, so docs/deploying.md and the stack cannot disagree.
 * Values from the command line arrive as strings; they are parsed and checked here, and a bad
 * value fails the synth with a message naming the key.
 */
export interface CustomDomain {
  /** e.g. `api.example.com`: the host becomes `https://api.example.com`. */
  readonly domainName: string;
  /** ACM certificate for the domain, in the stack's region (regional endpoint). */
  readonly certificateArn: string;
  /** Optional Route 53 zone for an alias record; without it, point DNS at the outputs yourself. */
  readonly hostedZone?: { readonly id: string; readonly name: string };
}

export interface TillgateConfig {
  /** Stage name: names the API Gateway stages and the stack (`Tillgate-<stage>`). */
  readonly stage: string;
  /** Throwaway stage: tables and log groups are destroyed with the stack, no deletion protection. */
  readonly ephemeral: boolean;
  /** Stage-wide steady-state limit, requests per second, per host. */
  readonly throttleRateLimit: number;
  /** Stage-wide burst (token bucket size), per host. */
  readonly throttleBurstLimit: number;
  /** Retention of every log group of the stack (functions, access logs, execution logs). */
  readonly logRetentionDays: number;
  /** Handed to the functions: how long event records live. */
  readonly eventRetentionDays: number;
  /** Handed to the functions: how long a valid token is cached per execution environment. */
  readonly tokenCacheSeconds: number;
  /** Powertools log level of the functions. */
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  readonly domains: Readonly<Partial<Record<HostId, CustomDomain>>>;
  /** E-mail address subscribed to a topic the stack creates for alarm notifications. */
  readonly alarmEmail?: string;
  /** Existing SNS topic that receives alarm notifications. */
  readonly alarmTopicArn?: string;
  /** p99 latency (ms) above which the latency alarm of a host fires. */
  readonly latencyAlarmMs: number;
  /** Create the account-level API Gateway CloudWatch Logs role (once per account and region). */
  readonly apiGatewayCloudWatchRole: boolean;
  /**
   * Existing WAFv2 web ACL (REGIONAL scope) to associate with both stages, instead of the stack's
   * own (a stage has at most one web ACL): the per-token limit is then the operator's ACL's to
   * provide (docs/security.md shows the rules to copy), and synth warns.
   */
  readonly webAclArn?: string;
  /** Ship the stack's web ACL with the per-token rate limit (default true). */
  readonly tokenRateLimitEnabled: boolean;
  /** Requests one X-Auth-Token may make per window, both hosts together. */
  readonly tokenRateLimit: number;
  /** The limits' window: 60, 120, 300 or 600 seconds (what WAF offers); also the 429's Retry-After. */
  readonly tokenRateLimitWindowSeconds: number;
  /** Handed to the functions: unknown codes one token may name per minute (redemptions and checks together) before 429. */
  readonly unknownCodeLimit: number;
  /** Handed to the functions: the most codes one account may hold issued; an issuance past it answers 409. */
  readonly accountCodeQuota: number;
  /** Requests without a well-formed X-Auth-Token one source address may make per window. */
  readonly tokenlessRateLimit: number;
  /** Requests of any kind one source address may make per window; 0 turns that rule off. */
  readonly sourceRateLimit: number;
  /**
   * Per secret, the label of its last manual rotation (`-c customerKeyRotation=…`, functions/secrets.ts):
   * handed to the functions that read it, so a new label makes them read the secret again.
   */
  readonly secretRotations: Readonly<Partial<Record<SecretId, string>>>;
}

export const defaults = {
  stage: 'prod',
  throttleRateLimit: 100,
  throttleBurstLimit: 200,
  logRetentionDays: 30,
  eventRetentionDays: 30,
  tokenCacheSeconds: 30,
  logLevel: 'INFO',
  latencyAlarmMs: 1500,
  tokenRateLimitEnabled: true,
  tokenRateLimit: 300,
  tokenRateLimitWindowSeconds: 60,
  unknownCodeLimit: 120,
  accountCodeQuota: 10_000_000,
  tokenlessRateLimit: 100,
  sourceRateLimit: 1500,
} as const;

/** The evaluation windows a WAF rate-based rule accepts. */
const RATE_WINDOWS = [60, 120, 300, 600];

/** The retention periods CloudWatch Logs accepts. */
const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];

/** 0 (no such rule) or what WAF allows a rate-based rule's limit to be. */
function sourceRateLimit(value: number): number {
  if (value !== 0 && value < 10) throw new Error(`Context sourceRateLimit must be 0 (off) or an integer from 10 to 2000000000, got "${value}"`);
  return value;
}

export function readConfig(node: Node): TillgateConfig {
  const raw = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    if (value === undefined || value === null || value === '') return undefined;
    return String(value);
  };
  const flag = (key: string, fallback = false): boolean => {
    const value = raw(key);
    if (value === undefined) return fallback;
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw new Error(`Context ${key} must be true or false, got "${value}"`);
  };
  const integer = (key: string, fallback: number, min: number, max: number): number => {
    const value = raw(key);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      throw new Error(`Context ${key} must be an integer from ${min} to ${max}, got "${value}"`);
    }
    return parsed;
  };

  const stage = raw('stage') ?? defaults.stage;
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new Error(`Context stage must be 1-20 of a-z 0-9 -, starting with a letter, got "${stage}"`);
  }

  const logRetentionDays = integer('logRetentionDays', defaults.logRetentionDays, 1, 3653);
  if (!LOG_RETENTION_DAYS.includes(logRetentionDays)) {
    throw new Error(`Context logRetentionDays must be one of ${LOG_RETENTION_DAYS.join(', ')}`);
  }

  const logLevel = (raw('logLevel') ?? defaults.logLevel).toUpperCase();
  if (logLevel !== 'DEBUG' && logLevel !== 'INFO' && logLevel !== 'WARN' && logLevel !== 'ERROR') {
    throw new Error(`Context logLevel must be DEBUG, INFO, WARN or ERROR, got "${logLevel}"`);
  }

  const domains: Partial<Record<HostId, CustomDomain>> = {};
  for (const host of Object.keys(hosts) as HostId[]) {
    const domainName = raw(`${host}DomainName`);
    const certificateArn = raw(`${host}CertificateArn`);
    const zoneId = raw(`${host}HostedZoneId`);
    const zoneName = raw(`${host}HostedZoneName`);
    if (!domainName && !certificateArn && !zoneId && !zoneName) continue;
    if (!domainName || !certificateArn) {
      throw new Error(`Context ${host}DomainName and ${host}CertificateArn go together`);
    }
    if (Boolean(zoneId) !== Boolean(zoneName)) {
      throw new Error(`Context ${host}HostedZoneId and ${host}HostedZoneName go together`);
    }
    domains[host] = {
      domainName,
      certificateArn,
      ...(zoneId && zoneName ? { hostedZone: { id: zoneId, name: zoneName } } : {}),
    };
  }

  const tokenRateLimitWindowSeconds = integer('tokenRateLimitWindowSeconds', defaults.tokenRateLimitWindowSeconds, 60, 600);
  if (!RATE_WINDOWS.includes(tokenRateLimitWindowSeconds)) {
    throw new Error(`Context tokenRateLimitWindowSeconds must be one of ${RATE_WINDOWS.join(', ')}, got "${tokenRateLimitWindowSeconds}"`);
  }

  const secretRotations: Partial<Record<SecretId, string>> = {};
  for (const secretId of secretIds) {
    const { context } = secrets[secretId].rotation;
    const label = raw(context);
    if (label === undefined) continue;
    if (!/^[A-Za-z0-9._:-]{1,64}$/.test(label)) {
      throw new Error(`Context ${context} must be 1-64 of A-Z a-z 0-9 . _ : - (a label such as the date of the rotation), got "${label}"`);
    }
    secretRotations[secretId] = label;
  }

  const alarmEmail = raw('alarmEmail');
  const alarmTopicArn = raw('alarmTopicArn');
  const webAclArn = raw('webAclArn');

  return {
    stage,
    ephemeral: flag('ephemeral'),
    throttleRateLimit: integer('throttleRateLimit', defaults.throttleRateLimit, 1, 10_000),
    throttleBurstLimit: integer('throttleBurstLimit', defaults.throttleBurstLimit, 1, 5_000),
    logRetentionDays,
    eventRetentionDays: integer('eventRetentionDays', defaults.eventRetentionDays, 1, 3650),
    tokenCacheSeconds: integer('tokenCacheSeconds', defaults.tokenCacheSeconds, 0, 3600),
    logLevel,
    domains,
    latencyAlarmMs: integer('latencyAlarmMs', defaults.latencyAlarmMs, 50, 29_000),
    apiGatewayCloudWatchRole: flag('apiGatewayCloudWatchRole'),
    ...(alarmEmail ? { alarmEmail } : {}),
    ...(alarmTopicArn ? { alarmTopicArn } : {}),
    ...(webAclArn ? { webAclArn } : {}),
    tokenRateLimitEnabled: flag('tokenRateLimitEnabled', defaults.tokenRateLimitEnabled),
    // WAF's own bounds for a rate-based rule's limit.
    tokenRateLimit: integer('tokenRateLimit', defaults.tokenRateLimit, 10, 2_000_000_000),
    tokenRateLimitWindowSeconds,
    unknownCodeLimit: integer('unknownCodeLimit', defaults.unknownCodeLimit, 1, 1_000_000),
    accountCodeQuota: integer('accountCodeQuota', defaults.accountCodeQuota, 1, 1_000_000_000_000),
    tokenlessRateLimit: integer('tokenlessRateLimit', defaults.tokenlessRateLimit, 10, 2_000_000_000),
    sourceRateLimit: sourceRateLimit(integer('sourceRateLimit', defaults.sourceRateLimit, 0, 2_000_000_000)),
    secretRotations,
  };
}
