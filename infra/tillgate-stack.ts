import path from 'node:path';
import { Annotations, CfnOutput, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { tables, type TableId } from '#functions/tables';
import { hosts, routes, type HostId, type TableAccess } from '#functions/routes';
import type { TillgateConfig } from './config.ts';
import { Buckets } from './constructs/buckets.ts';
import { DataTables } from './constructs/data-tables.ts';
import { FunctionWithLogGroup } from './constructs/function-with-log-group.ts';
import { HostApi } from './constructs/host-api.ts';
import { Observability } from './constructs/observability.ts';
import { TokenRateLimit } from './constructs/token-rate-limit.ts';
import { Workers } from './constructs/workers.ts';
import { queues } from '#functions/queues';
import { bucketIds, buckets } from '#functions/buckets';
import { keyIds, secretIds, secrets } from '#functions/secrets';
import { Secrets } from './constructs/secrets.ts';
import { Keys } from './constructs/keys.ts';

/** The repository root: route entries are relative to it. */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..');

export interface TillgateStackProps extends StackProps {
  readonly config: TillgateConfig;
}

/** Id of the synth warning for a production stage whose alarms notify nobody. */
export const ALARMS_NOTIFY_NOBODY = 'tillgate:alarmsNotifyNobody';
/** Id of the synth warning for an operator's web ACL replacing the stack's (and its per-token limit). */
export const OWN_WEB_ACL_WITHOUT_TOKEN_LIMIT = 'tillgate:ownWebAclWithoutTokenLimit';

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/**
 * tillgate in one stack: the tables, the secrets and keys, one function per route, one REST API per host,
 * and the on-call kit. Everything that varies by operation comes from functions/routes.ts,
 * functions/tables.ts and functions/secrets.ts; nothing here names a route, a table, a secret or a key by hand.
 */
export class TillgateStack extends Stack {
  readonly apis: Readonly<Record<HostId, HostApi>>;
  readonly functions: ReadonlyMap<string, FunctionWithLogGroup>;
  readonly dataTables: DataTables;
  readonly buckets: Buckets;
  readonly secrets: Secrets;
  readonly keys: Keys;
  readonly workers: Workers;
  readonly observability: Observability;
  /** The stack's web ACL with the per-token limit; undefined when off or replaced by webAclArn. */
  readonly tokenRateLimit?: TokenRateLimit;

  constructor(scope: Construct, id: string, props: TillgateStackProps) {
    super(scope, id, props);
    const { config } = props;
    const removalPolicy = config.ephemeral ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;
    const logRetention = config.logRetentionDays as RetentionDays;
    Tags.of(this).add('tillgate:stage', config.stage);

    this.dataTables = new DataTables(this, 'Tables', { ephemeral: config.ephemeral });
    this.buckets = new Buckets(this, 'Buckets', { ephemeral: config.ephemeral });
    this.secrets = new Secrets(this, 'Secrets', { stage: config.stage, ephemeral: config.ephemeral });
    this.keys = new Keys(this, 'Keys', { stage: config.stage, ephemeral: config.ephemeral });

    const environment = {
      POWERTOOLS_SERVICE_NAME: 'tillgate',
      POWERTOOLS_METRICS_NAMESPACE: 'Tillgate',
      POWERTOOLS_LOG_LEVEL: config.logLevel,
      TILLGATE_STAGE: config.stage,
      EVENT_RETENTION_DAYS: String(config.eventRetentionDays),
      TOKEN_CACHE_SECONDS: String(config.tokenCacheSeconds),
      UNKNOWN_CODE_LIMIT: String(config.unknownCodeLimit),
      ACCOUNT_CODE_QUOTA: String(config.accountCodeQuota),
    };
    this.workers = new Workers(this, 'Workers', {
      projectRoot: PROJECT_ROOT,
      tables: this.dataTables,
      buckets: this.buckets,
      keys: this.keys,
      logRetention,
      removalPolicy,
      environment,
    });

    const functions = new Map<string, FunctionWithLogGroup>();
    for (const route of routes) {
      const fn = new FunctionWithLogGroup(this, `${pascal(route.operationId)}Function`, {
        operationId: route.operationId,
        entry: path.join(PROJECT_ROOT, route.entry),
        description: `tillgate ${route.method} ${route.path}: ${route.summary}`,
        projectRoot: PROJECT_ROOT,
        logRetention,
        removalPolicy,
        environment,
      });
      for (const [tableId, actions] of Object.entries(route.tables) as [TableId, TableAccess][]) {
        fn.bindTable(this.dataTables.byId[tableId], actions);
      }
      for (const queueId of route.queues ?? []) fn.bindQueue(this.workers.queues[queueId], queues[queueId].envVar);
      for (const secretId of route.secrets ?? []) {
        fn.bindSecret(this.secrets.byId[secretId], secrets[secretId].arnEnvVar);
        const rotation = config.secretRotations[secretId];
        if (rotation !== undefined) fn.addEnvironment(secrets[secretId].rotation.envVar, rotation);
      }
      fn.bindKeys(this.keys, route.keys ?? {});
      fn.bindBuckets(this.buckets.byId, route.buckets ?? {});
      Tags.of(fn).add('tillgate:operation', route.operationId);
      functions.set(route.operationId, fn);
    }
    this.functions = functions;

    // One web ACL per stage at most (an AWS rule): the operator's own, else the stack's, which
    // carries the per-token limit (docs/security.md).
    this.tokenRateLimit =
      config.tokenRateLimitEnabled && !config.webAclArn
        ? new TokenRateLimit(this, 'TokenRateLimit', {
            stageName: config.stage,
            limit: config.tokenRateLimit,
            tokenlessLimit: config.tokenlessRateLimit,
            sourceLimit: config.sourceRateLimit,
            windowSeconds: config.tokenRateLimitWindowSeconds,
          })
        : undefined;
    const webAclArn = config.webAclArn ?? this.tokenRateLimit?.webAcl.attrArn;
    if (config.webAclArn && config.tokenRateLimitEnabled) {
      Annotations.of(this).addWarningV2(
        OWN_WEB_ACL_WITHOUT_TOKEN_LIMIT,
        "webAclArn replaces the stack's web ACL (a stage has one at most), so the per-token rate limit is not shipped: " +
          'add its rules to your web ACL (docs/security.md, "Per-token limits"), or set -c tokenRateLimitEnabled=false to silence this.',
      );
    }

    const apis = {} as Record<HostId, HostApi>;
    for (const host of Object.values(hosts)) {
      const domain = config.domains[host.id];
      apis[host.id] = new HostApi(this, `${pascal(host.id)}Api`, {
        host,
        routes: routes.filter((route) => route.host === host.id),
        functions,
        stageName: config.stage,
        throttleRateLimit: config.throttleRateLimit,
        throttleBurstLimit: config.throttleBurstLimit,
        logRetention,
        removalPolicy,
        ...(domain ? { domain } : {}),
        ...(webAclArn ? { webAclArn } : {}),
      });
    }
    this.apis = apis;

    if (config.apiGatewayCloudWatchRole) this.addApiGatewayAccountRole(Object.values(apis));

    this.observability = new Observability(this, 'OnCall', {
      stage: config.stage,
      apis,
      functions: [...functions.values(), ...this.workers.functions.values()],
      tables: Object.values(this.dataTables.byId),
      workers: this.workers,
      latencyAlarmMs: config.latencyAlarmMs,
      ...(config.alarmEmail ? { alarmEmail: config.alarmEmail } : {}),
      ...(config.alarmTopicArn ? { alarmTopicArn: config.alarmTopicArn } : {}),
    });
    if (!config.ephemeral && !config.alarmEmail && !config.alarmTopicArn) {
      // A production stage whose alarms tell nobody looks monitored and is not: say so at synth.
      Annotations.of(this).addWarningV2(
        ALARMS_NOTIFY_NOBODY,
        `Stage "${config.stage}" is a production stage (ephemeral is not set) and its ` +
          `${this.observability.alarms.length} alarms notify nobody: deploy with -c alarmEmail=… ` +
          'and/or -c alarmTopicArn=… (see docs/deploying.md, "Deploy").',
      );
    }

    for (const [hostId, api] of Object.entries(apis)) {
      new CfnOutput(this, `${pascal(hostId)}BaseUrl`, {
        description: `${hostId} host base URL (${hosts[hostId as HostId].versionPrefix} routes), no trailing slash`,
        value: api.baseUrl,
      });
      if (api.domain) {
        new CfnOutput(this, `${pascal(hostId)}DomainTarget`, {
          description: `${hostId} custom domain: point a DNS alias/CNAME here when no hosted zone was given`,
          value: api.domain.domainNameAliasDomainName,
        });
      }
    }
    for (const { id: tableId, table } of Object.values(this.dataTables.byId)) {
      new CfnOutput(this, `${pascal(tableId)}TableName`, {
        description: `Physical name of the ${tableId} table (environment variable ${tables[tableId].envVar})`,
        value: table.tableName,
      });
    }
    for (const bucketId of bucketIds) {
      new CfnOutput(this, `${pascal(bucketId)}BucketName`, {
        description: `Physical name of the ${bucketId} bucket (environment variable ${buckets[bucketId].envVar}; functions/buckets.ts)`,
        value: this.buckets.byId[bucketId].bucketName,
      });
    }
    for (const secretId of secretIds) {
      new CfnOutput(this, `${pascal(secretId)}SecretArn`, {
        description: `ARN of the Secrets Manager secret ${secretId} (functions/secrets.ts; its value stays in Secrets Manager): docs/deploying.md says how to rotate it`,
        value: this.secrets.byId[secretId].secretArn,
      });
    }
    for (const keyId of keyIds) {
      new CfnOutput(this, `${pascal(keyId)}KeyArn`, {
        description: `ARN of the KMS key ${keyId} (functions/secrets.ts, its use in docs/security.md)`,
        value: this.keys.byId[keyId].keyArn,
      });
    }
    if (this.tokenRateLimit) {
      new CfnOutput(this, 'TokenRateLimitWebAclArn', {
        description: `The stack's web ACL (both stages): at most ${config.tokenRateLimit} requests per ${config.tokenRateLimitWindowSeconds} s per X-Auth-Token`,
        value: this.tokenRateLimit.webAcl.attrArn,
      });
    }
    new CfnOutput(this, 'DashboardName', {
      description: 'CloudWatch dashboard for both hosts',
      value: this.observability.dashboard.dashboardName,
    });
    new CfnOutput(this, 'WebhookDeliveriesQueryName', {
      description: "Saved Logs Insights query: one webhook endpoint's delivery attempts (paste its account and endpoint id)",
      value: this.observability.queryNames.webhookDeliveries,
    });
    new CfnOutput(this, 'RequestByIdQueryName', {
      description: 'Saved Logs Insights query that follows one request by its X-Request-Id',
      value: this.observability.queryNames.requestById,
    });
  }

  /**
   * API Gateway writes access and execution logs with one role per account and region (an
   * account setting, not a property of an API). Two APIs or two stages that each set it would
   * fight over it, and deleting one stack would break logging for the rest; so the APIs never
   * create it, and this stack does only when asked with `-c apiGatewayCloudWatchRole=true`,
   * keeping the role when the stack goes.
   */
  private addApiGatewayAccountRole(apis: HostApi[]): void {
    const role = new Role(this, 'ApiGatewayCloudWatchRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway account-level role for writing access and execution logs (all APIs in this region)',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        'This is the account-wide API Gateway logging role: it must create and write the log groups ' +
        'of every API in the region, whose names are not known here. AWS maintains this service-role ' +
        'policy for exactly that purpose.',
    });
    const account = new CfnAccount(this, 'ApiGatewayAccount', { cloudWatchRoleArn: role.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    for (const api of apis) api.api.deploymentStage.node.addDependency(account);
  }
}
