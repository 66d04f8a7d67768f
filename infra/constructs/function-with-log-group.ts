import { type CfnElement, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { BucketAccess, BucketId } from '#functions/buckets';
import { buckets as bucketSpecs } from '#functions/buckets';
import type { KeyAccess, TableAccess } from '#functions/routes';
import { keys as keySpecs, type KeyId, type KmsAction } from '#functions/secrets';
import { OPERATION_METADATA_KEY } from '../bundles.ts';
import type { DataTable } from './data-tables.ts';
import { encryptionContextCondition, type Keys } from './keys.ts';

/**
 * How every function is bundled. Exported so that `npm run bench` builds its reference bundles
 * with exactly these options (scripts/bench/references.ts).
 */
export const BUNDLING = {
  forceDockerBundling: false,
  logLevel: LogLevel.WARNING,
  format: OutputFormat.ESM,
  target: 'node24',
  platform: 'node',
  mainFields: ['module', 'main'],
  // Whitespace and syntax minified, identifiers kept: a stack trace read in CloudWatch names the
  // functions it passed through without runtime source maps, which cost 15–19 ms per cold start
  // (`NODE_OPTIONS=--enable-source-maps`, docs/benchmarks.md, "Cold start"). Not `keepNames`: with identifiers
  // unminified V8 already knows the names, and its `__name()` calls would run every time a
  // closure is created (the SDK creates dozens per request: about 30 µs of CPU each time).
  minify: false,
  esbuildArgs: { '--minify-whitespace': true, '--minify-syntax': true },
  // Shipped beside the bundle and read only when a request fails with a 5xx, to log the failing
  // frames at their TypeScript positions (functions/runtime/original-stack.ts).
  sourceMap: true,
  // Line mappings without a copy of every source: smaller map, same positions.
  sourcesContent: false,
  // Ship the SDK version the tests ran against instead of the runtime's copy.
  bundleAwsSDK: true,
  externalModules: [],
  // CommonJS dependencies call require(); ESM output has none unless we make one.
  banner: "import { createRequire as __tillgateCreateRequire } from 'node:module';" + 'const require = __tillgateCreateRequire(import.meta.url);',
} satisfies BundlingOptions;

export interface FunctionWithLogGroupProps {
  /** Names the function everywhere (see the route table). */
  readonly operationId: string;
  /** Handler module, absolute path; it exports `handler`. */
  readonly entry: string;
  readonly description: string;
  /** Repository root: esbuild's working directory and the lock file's home. */
  readonly projectRoot: string;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  readonly environment: Readonly<Record<string, string>>;
  /** Default 10 s (an API function); a worker names its own. */
  readonly timeout?: Duration;
  /**
   * Who invokes it: API Gateway (default), or an event source mapping (a stream or a queue),
   * which has its own failure handling instead of an asynchronous dead-letter queue.
   */
  readonly invokedBy?: 'api' | 'stream' | 'queue';
}

/**
 * A NodejsFunction with the house defaults: Node.js 24 on arm64, an ESM bundle built by the local
 * esbuild (no Docker), its own log group with retention, X-Ray tracing, and a role that starts
 * with nothing but the right to write its own log group (no AWS managed policy). Tables are
 * added with `bindTable`, which sets the environment variable and the grant in one call so the
 * two cannot drift apart.
 */
export class FunctionWithLogGroup extends NodejsFunction {
  readonly operationId: string;
  readonly logGroupResource: LogGroup;
  readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: FunctionWithLogGroupProps) {
    // Created beside the function (not inside it) because they must exist before super().
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `tillgate ${props.operationId}: its own log group, X-Ray, and the tables of its route`,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      // 1024 MB buys roughly 0.6 vCPU: module initialisation (SDK, Powertools, compiled schemas)
      // is CPU-bound, so cold starts stay well under a second; a warm request spends its time
      // waiting on DynamoDB and costs the same order as at 256 MB because it finishes faster.
      memorySize: 1024,
      // A request makes at most a handful of DynamoDB calls with SDK retries. 10 s leaves room for
      // retries with back-off and still ends well inside API Gateway's 29 s integration limit, so
      // a hung call shows up as a Lambda timeout (logged, counted in Errors) and not a bare 504.
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      role,
      logGroup,
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      // No NODE_OPTIONS: --enable-source-maps parses the map at every cold start; stack traces
      // are mapped on the error path instead (see BUNDLING).
      environment: { ...props.environment },
      bundling: BUNDLING,
    });

    this.operationId = props.operationId;
    this.logGroupResource = logGroup;
    this.executionRole = role;
    (this.node.defaultChild as CfnFunction).addMetadata(OPERATION_METADATA_KEY, props.operationId);

    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support ' +
        'resource-level permissions, so AWS requires Resource "*" for them. Every other statement ' +
        'of this role names its own log group and its tables.',
    });
    const invokedBy = props.invokedBy ?? 'api';
    const reasons = {
      api:
        'Only API Gateway invokes this function, synchronously (Lambda proxy integration); the ' +
        'caller receives every failure as an HTTP response, so there are no asynchronous ' +
        'events that a dead-letter queue or failure destination could catch.',
      stream:
        'Only its DynamoDB stream event source mapping invokes this function, synchronously; ' +
        "records that keep failing go to the mapping's on-failure destination (an SQS queue with an alarm).",
      queue:
        'Only its SQS event source mapping invokes this function, synchronously; messages that ' +
        "keep failing go to the queue's own dead-letter queue (redrive policy, with an alarm).",
    };
    for (const rule of ['Serverless-LambdaDLQ', 'Serverless-LambdaAsyncFailureDestination']) {
      Validations.of(this).acknowledge({ id: rule, reason: reasons[invokedBy] });
    }
  }

  /**
   * Sets the table's environment variable and grants exactly the actions the route declares: on
   * the table, and Query on its indexes too (see TableAccess in functions/routes.ts).
   */
  bindTable(data: DataTable, actions: TableAccess): void {
    this.addEnvironment(data.spec.envVar, data.table.tableName);
    this.executionRole.addToPrincipalPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: actions.map((action) => `dynamodb:${action}`),
        resources: [data.table.tableArn],
      }),
    );
    const indexArns = (data.spec.indexes ?? []).map((index) => `${data.table.tableArn}/index/${index.name}`);
    if (actions.includes('Query') && indexArns.length > 0) {
      this.executionRole.addToPrincipalPolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: ['dynamodb:Query'], resources: indexArns }));
    }
  }

  /**
   * For each bucket the row declares: sets its environment variable (the bucket's name) and grants
   * exactly the declared S3 actions on its objects (`bucket/*`), nothing on the bucket itself.
   */
  bindBuckets(byId: Readonly<Record<BucketId, IBucket>>, access: BucketAccess): void {
    for (const [bucketId, actions] of Object.entries(access) as [BucketId, readonly string[]][]) {
      const bucket = byId[bucketId];
      this.addEnvironment(bucketSpecs[bucketId].envVar, bucket.bucketName);
      this.executionRole.addToPrincipalPolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: [...actions], resources: [bucket.arnForObjects('*')] }));
      const logicalId = Stack.of(bucket).getLogicalId(bucket.node.defaultChild as CfnElement);
      Validations.of(this.executionRole).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/*]`,
        reason: `Objects of one bucket, with only ${actions.join(', ')}: every account's exports are objects of it, keyed by account and export id, and the function's code picks the key (functions/buckets.ts).`,
      });
    }
  }

  /** Sets the queue's environment variable and grants sending to it, and nothing else on it. */
  bindQueue(queue: IQueue, envVar: string): void {
    this.addEnvironment(envVar, queue.queueUrl);
    queue.grantSendMessages(this.executionRole);
  }

  /**
   * For each key the row declares: sets its environment variable (the key's ARN) and grants
   * exactly the declared KMS actions on it, under its encryption context, in this role and in the
   * key's policy (a customer-managed key's policy must name the role: functions/secrets.ts).
   */
  bindKeys(keys: Keys, access: KeyAccess): void {
    for (const [keyId, actions] of Object.entries(access) as [KeyId, readonly KmsAction[]][]) {
      const key = keys.byId[keyId];
      this.addEnvironment(keySpecs[keyId].arnEnvVar, key.keyArn);
      this.executionRole.addToPrincipalPolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: actions.map((action) => `kms:${action}`),
          resources: [key.keyArn],
          conditions: encryptionContextCondition(keySpecs[keyId]),
        }),
      );
      keys.grant(keyId, this.executionRole, actions);
    }
  }

  /**
   * Sets the secret's environment variable (its ARN, never its value) and grants reading its
   * value, and nothing else on it: not `grantRead`, which adds DescribeSecret.
   */
  bindSecret(secret: ISecret, envVar: string): void {
    this.addEnvironment(envVar, secret.secretArn);
    this.executionRole.addToPrincipalPolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }),
    );
  }
}
