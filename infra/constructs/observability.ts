import { Aws, Duration, Validations } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  LogQueryWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IAlarm,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation } from 'aws-cdk-lib/aws-dynamodb';
import { QueryDefinition, QueryString, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { HostId } from '#functions/routes';
import { queueIds, queues as queueSpecs } from '#functions/queues';
import { workers as workerRows } from '#functions/workers';
import type { DataTable } from './data-tables.ts';
import type { FunctionWithLogGroup } from './function-with-log-group.ts';
import type { HostApi } from './host-api.ts';
import type { Workers } from './workers.ts';

export interface ObservabilityProps {
  readonly stage: string;
  readonly apis: Readonly<Record<HostId, HostApi>>;
  readonly functions: readonly FunctionWithLogGroup[];
  readonly tables: readonly DataTable[];
  readonly latencyAlarmMs: number;
  /** The webhook plumbing: its functions are in `functions` too; its queues and stream are watched here. */
  readonly workers?: Workers;
  readonly alarmEmail?: string;
  readonly alarmTopicArn?: string;
}

const FIVE_MINUTES = Duration.minutes(5);

/** The DynamoDB operations the handlers use; an alarm's math may hold at most 10 metrics. */
const DYNAMODB_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

/**
 * On-call: one dashboard for both hosts, the saved Logs Insights queries the runbook names, and
 * alarms whose descriptions say where to look next.
 */
export class Observability extends Construct {
  readonly dashboard: Dashboard;
  readonly alarms: Alarm[] = [];
  readonly queries: Record<'requestById' | 'slowestRequests' | 'errorsByRoute' | 'unauthorizedBySource' | 'webhookDeliveries', QueryDefinition>;
  readonly queryNames: Record<keyof Observability['queries'], string>;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { stage } = props;
    const dashboardName = `tillgate-${stage}-${Aws.REGION}`;
    const folder = `tillgate-${stage}`;
    this.queryNames = {
      requestById: `${folder}/request-by-x-request-id`,
      slowestRequests: `${folder}/slowest-requests`,
      errorsByRoute: `${folder}/errors-by-route`,
      unauthorizedBySource: `${folder}/401s-by-source`,
      webhookDeliveries: `${folder}/webhook-deliveries-of-one-endpoint`,
    };

    const functionLogs: ILogGroup[] = props.functions.map((fn) => fn.logGroupResource);
    const accessLogs: ILogGroup[] = Object.values(props.apis).map((api) => api.accessLogs);

    // ---- Saved Logs Insights queries ------------------------------------------------------
    this.queries = {
      // Without an incoming X-Request-Id the functions use API Gateway's request id, which the
      // access log has as requestId: one query finds the request in both, including responses
      // API Gateway made itself (no route, throttled, gateway 5xx).
      requestById: new QueryDefinition(this, 'RequestByIdQuery', {
        queryDefinitionName: this.queryNames.requestById,
        logGroups: [...functionLogs, ...accessLogs],
        queryString: new QueryString({
          fields: [
            '@timestamp',
            '@log',
            'level',
            'message',
            'operation',
            'method',
            'path',
            'status',
            'latency_ms',
            'account_id',
            'error_name',
            'error_message',
            'function_request_id',
            'xray_trace_id',
            'httpMethod',
            'resourcePath',
            'errorResponseType',
            'integrationRequestId',
          ],
          filterStatements: ['request_id = "PASTE-X-REQUEST-ID-HERE" or requestId = "PASTE-X-REQUEST-ID-HERE"'],
          sort: '@timestamp asc',
          limit: 200,
        }),
      }),
      slowestRequests: new QueryDefinition(this, 'SlowestRequestsQuery', {
        queryDefinitionName: this.queryNames.slowestRequests,
        logGroups: functionLogs,
        queryString: new QueryString({
          fields: ['@timestamp', 'request_id', 'operation', 'method', 'path', 'status', 'latency_ms', 'account_id', 'cold_start'],
          filterStatements: ['ispresent(latency_ms)'],
          sort: 'latency_ms desc',
          limit: 50,
        }),
      }),
      errorsByRoute: new QueryDefinition(this, 'ErrorsByRouteQuery', {
        queryDefinitionName: this.queryNames.errorsByRoute,
        logGroups: functionLogs,
        queryString: new QueryString({
          filterStatements: ['status >= 500 or level = "ERROR"'],
          statsStatements: ['count(*) as errors, latest(request_id) as last_request_id, latest(error_message) as last_error by operation, status, error_name'],
          sort: 'errors desc',
        }),
      }),
      // API Gateway's access log has the caller's address for every request, including those the
      // functions never saw (throttled, no route).
      unauthorizedBySource: new QueryDefinition(this, 'UnauthorizedBySourceQuery', {
        queryDefinitionName: this.queryNames.unauthorizedBySource,
        logGroups: accessLogs,
        queryString: new QueryString({
          filterStatements: ['status = 401'],
          statsStatements: ['count(*) as rejected, latest(userAgent) as user_agent by ip, httpMethod, resourcePath'],
          sort: 'rejected desc',
          limit: 100,
        }),
      }),
      // "An integration says it got nothing": every attempt to one endpoint, with its outcome
      // (the sender logs one line per attempt; fan-out and message failures are ERROR lines).
      webhookDeliveries: new QueryDefinition(this, 'WebhookDeliveriesQuery', {
        queryDefinitionName: this.queryNames.webhookDeliveries,
        logGroups: props.workers ? [...props.workers.functions.values()].map((fn) => fn.logGroupResource) : functionLogs,
        queryString: new QueryString({
          fields: [
            '@timestamp',
            'event_id',
            'generation',
            'attempt',
            'outcome',
            'response_status',
            'duration_ms',
            'error_code',
            'origin',
            'lane',
            'moved_to_lane',
          ],
          filterStatements: ['message = "webhook attempt"', 'account_id = PASTE-ACCOUNT-ID and endpoint_id = PASTE-ENDPOINT-ID'],
          sort: '@timestamp desc',
          limit: 500,
        }),
      }),
    };

    const lookHere = (what: string) =>
      `${what} Look at dashboard ${dashboardName}; then in CloudWatch Logs Insights run the saved query ` +
      `${this.queryNames.errorsByRoute} (or ${this.queryNames.slowestRequests} for latency) and follow one ` +
      `request with ${this.queryNames.requestById} (paste its request_id / X-Request-Id). Runbook: docs/operations.md, "On-call runbook".`;

    // ---- Alarms -----------------------------------------------------------------------------
    for (const [hostId, host] of Object.entries(props.apis) as [HostId, HostApi][]) {
      const api = host.api;
      const requests = api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
      const serverErrors = api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
      this.alarms.push(
        new Alarm(this, `${pascal(hostId)}ServerErrorRateAlarm`, {
          alarmDescription: lookHere(
            `tillgate ${stage} ${hostId} host: more than 1% of requests answered 5xx (counted only in ` +
              `5-minute windows with at least 10 requests), in 2 of the last 3 windows.`,
          ),
          metric: new MathExpression({
            expression: 'IF(requests >= 10, 100 * errors / requests, 0)',
            usingMetrics: { requests, errors: serverErrors },
            period: FIVE_MINUTES,
            label: `${hostId} 5xx rate (%)`,
          }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        new Alarm(this, `${pascal(hostId)}LatencyP99Alarm`, {
          alarmDescription: lookHere(`tillgate ${stage} ${hostId} host: p99 latency above ${props.latencyAlarmMs} ms for 15 minutes.`),
          metric: api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }),
          threshold: props.latencyAlarmMs,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 3,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    for (const fn of props.functions) {
      const name = pascal(fn.operationId);
      this.alarms.push(
        new Alarm(this, `${name}ErrorsAlarm`, {
          alarmDescription: lookHere(
            `tillgate ${stage} ${fn.operationId}: the function crashed or timed out (Lambda Errors >= 1 in 5 ` +
              `minutes). Handled errors answer 500 without counting here, so this is an unhandled fault or a ` +
              `timeout; the function's log group shows the stack trace.`,
          ),
          metric: fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        new Alarm(this, `${name}ThrottlesAlarm`, {
          alarmDescription: lookHere(
            `tillgate ${stage} ${fn.operationId}: Lambda throttled invocations (account or reserved ` +
              `concurrency exhausted); callers got 5xx. Check ConcurrentExecutions on the dashboard and the ` +
              `account's Lambda concurrency quota.`,
          ),
          metric: fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    for (const { id: tableId, table } of props.tables) {
      const name = pascal(tableId);
      this.alarms.push(
        new Alarm(this, `${name}ThrottlesAlarm`, {
          alarmDescription: lookHere(
            `tillgate ${stage} table ${tableId}: DynamoDB throttled reads or writes in 2 of the last 3 ` +
              `5-minute windows; callers got 503 with Retry-After. On-demand tables throttle when traffic more ` +
              `than doubles its previous peak quickly, or on a hot partition key.`,
          ),
          metric: new MathExpression({
            expression: 'reads + writes',
            usingMetrics: {
              reads: table.metric('ReadThrottleEvents', { period: FIVE_MINUTES, statistic: 'Sum' }),
              writes: table.metric('WriteThrottleEvents', { period: FIVE_MINUTES, statistic: 'Sum' }),
            },
            period: FIVE_MINUTES,
            label: `${tableId} throttle events`,
          }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
        new Alarm(this, `${name}SystemErrorsAlarm`, {
          alarmDescription: lookHere(
            `tillgate ${stage} table ${tableId}: DynamoDB answered with internal server errors in 2 of the ` +
              `last 3 5-minute windows; callers got 503. Check the AWS Health Dashboard for DynamoDB in this ` +
              `region.`,
          ),
          metric: table.metricSystemErrorsForOperations({
            operations: DYNAMODB_OPERATIONS,
            period: FIVE_MINUTES,
            statistic: 'Sum',
          }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    if (props.workers) {
      this.alarms.push(...webhookAlarms(this, stage, this.queryNames.webhookDeliveries, lookHere));
      this.alarms.push(...streamAlarms(this, props.workers, stage, lookHere));
      this.alarms.push(...queueAlarms(this, props.workers, stage, lookHere));
    }

    const topics: ITopic[] = [];
    if (props.alarmTopicArn) topics.push(Topic.fromTopicArn(this, 'AlarmTopicImported', props.alarmTopicArn));
    if (props.alarmEmail) {
      const topic = new Topic(this, 'AlarmTopic', {
        displayName: `tillgate ${stage} alarms`,
        enforceSSL: true,
      });
      const subscription = new EmailSubscription(props.alarmEmail);
      topic.addSubscription(subscription);
      Validations.of(topic).acknowledge({
        id: 'AwsSolutions-SNS2',
        reason:
          'The topic carries only CloudWatch alarm state changes (names, thresholds, metric values), ' +
          'no customer data. CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS ' +
          'key, and a customer-managed KMS key for alarm notices is not worth its cost here.',
      });
      Validations.of(topic).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'The only subscription is an e-mail address for alarm notices; an undeliverable notice ' +
          'would sit unread in a dead-letter queue too, and the alarm state stays visible in CloudWatch.',
      });
      topics.push(topic);
    }
    for (const topic of topics) {
      const action = new SnsAction(topic);
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }

    // ---- Dashboard --------------------------------------------------------------------------
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName,
      defaultInterval: Duration.hours(3),
    });
    const apiEntries = Object.entries(props.apis) as [HostId, HostApi][];
    const emf = (metricName: string, operationId: string, statistic: string, unitLabel?: string): IMetric =>
      new Metric({
        namespace: 'Tillgate',
        metricName,
        dimensionsMap: { service: 'tillgate', stage, operation: operationId },
        statistic,
        period: Duration.minutes(1),
        label: unitLabel ?? operationId,
      });

    this.dashboard.addWidgets(
      new TextWidget({
        markdown:
          `# tillgate ${stage}\n` +
          apiEntries.map(([hostId, host]) => `**${hostId}**: ${host.baseUrl}`).join(' · ') +
          `\n\nFollow a request: Logs Insights → saved query \`${this.queryNames.requestById}\` (by X-Request-Id). ` +
          `Errors: \`${this.queryNames.errorsByRoute}\`. Slow: \`${this.queryNames.slowestRequests}\`. ` +
          `401s: \`${this.queryNames.unauthorizedBySource}\`.`,
        width: 24,
        height: 3,
      }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms as IAlarm[], width: 24, height: 4 }));
    this.dashboard.addWidgets(
      ...apiEntries.map(
        ([hostId, host]) =>
          new GraphWidget({
            title: `${hostId}: requests, 4xx, 5xx (API Gateway)`,
            left: [
              host.api.metricCount({ period: Duration.minutes(1), statistic: 'Sum', label: 'requests' }),
              host.api.metricClientError({ period: Duration.minutes(1), statistic: 'Sum', label: '4xx' }),
              host.api.metricServerError({ period: Duration.minutes(1), statistic: 'Sum', label: '5xx' }),
            ],
            width: 12,
          }),
      ),
    );
    this.dashboard.addWidgets(
      ...apiEntries.map(
        ([hostId, host]) =>
          new GraphWidget({
            title: `${hostId}: latency (API Gateway, ms)`,
            left: [
              host.api.metricLatency({ period: Duration.minutes(1), statistic: 'p50', label: 'p50' }),
              host.api.metricLatency({ period: Duration.minutes(1), statistic: 'p99', label: 'p99' }),
              host.api.metricIntegrationLatency({ period: Duration.minutes(1), statistic: 'p99', label: 'integration p99' }),
            ],
            leftAnnotations: [{ value: props.latencyAlarmMs, label: 'p99 alarm' }],
            width: 12,
          }),
      ),
    );
    const operations = props.functions.map((fn) => fn.operationId);
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests by operation (EMF, Tillgate namespace)',
        left: operations.map((op) => emf('Requests', op, 'Sum')),
        width: 8,
      }),
      new GraphWidget({
        title: 'Server errors by operation (EMF)',
        left: operations.map((op) => emf('ServerErrors', op, 'Sum')),
        width: 8,
      }),
      new GraphWidget({
        title: 'p99 latency by operation (EMF, ms)',
        left: operations.map((op) => emf('Latency', op, 'p99')),
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda errors and throttles',
        left: props.functions.flatMap((fn) => [
          fn.metricErrors({ period: Duration.minutes(1), statistic: 'Sum', label: `${fn.operationId} errors` }),
          fn.metricThrottles({ period: Duration.minutes(1), statistic: 'Sum', label: `${fn.operationId} throttles` }),
        ]),
        width: 8,
      }),
      new GraphWidget({
        title: 'Lambda duration p99 (ms)',
        left: props.functions.map((fn) => fn.metricDuration({ period: Duration.minutes(1), statistic: 'p99', label: fn.operationId })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Lambda concurrent executions',
        left: props.functions.map((fn) => fn.metric('ConcurrentExecutions', { period: Duration.minutes(1), statistic: 'Maximum', label: fn.operationId })),
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'DynamoDB consumed capacity (units/min)',
        left: props.tables.flatMap(({ id: tableId, table }) => [
          table.metricConsumedReadCapacityUnits({ period: Duration.minutes(1), statistic: 'Sum', label: `${tableId} read` }),
          table.metricConsumedWriteCapacityUnits({ period: Duration.minutes(1), statistic: 'Sum', label: `${tableId} write` }),
        ]),
        width: 12,
      }),
      new GraphWidget({
        title: 'DynamoDB throttle events',
        left: props.tables.flatMap(({ id: tableId, table }) => [
          table.metric('ReadThrottleEvents', { period: Duration.minutes(1), statistic: 'Sum', label: `${tableId} read` }),
          table.metric('WriteThrottleEvents', { period: Duration.minutes(1), statistic: 'Sum', label: `${tableId} write` }),
        ]),
        width: 12,
      }),
    );
    if (props.workers) this.dashboard.addWidgets(...webhookWidgets(props.workers, stage));
    this.dashboard.addWidgets(
      new LogQueryWidget({
        title: 'Latest server errors (function logs)',
        logGroupNames: functionLogs.map((group) => group.logGroupName),
        queryLines: [
          'fields @timestamp, request_id, operation, status, error_name, error_message',
          'filter status >= 500 or level = "ERROR"',
          'sort @timestamp desc',
          'limit 20',
        ],
        width: 24,
        height: 6,
      }),
    );
  }
}

const webhookMetric = (stage: string, metricName: string, statistic: string, period = FIVE_MINUTES, label?: string) =>
  new Metric({ namespace: 'Tillgate', metricName, dimensionsMap: { service: 'tillgate', stage }, statistic, period, label: label ?? metricName });

/**
 * Each stream worker of functions/workers.ts: its stream read late, its records given up on; what
 * that means and where to look is its row's (`onCall`).
 */
function streamAlarms(scope: Construct, workers: Workers, stage: string, lookHere: (what: string) => string): Alarm[] {
  const alarms: Alarm[] = [];
  for (const worker of workerRows) {
    const { trigger } = worker;
    const fn = workers.functions.get(worker.name);
    const failures = workers.failureQueues.get(worker.name);
    if (trigger.kind !== 'stream' || !fn || !failures) continue;
    alarms.push(
      new Alarm(scope, `${pascal(worker.name)}IteratorAgeAlarm`, {
        alarmDescription: lookHere(
          `tillgate ${stage} ${worker.name}: the ${trigger.table} stream is read more than 60 s behind for 5 minutes: ${trigger.onCall.late}`,
        ),
        metric: fn.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 60_000,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      // A failure queue that a worker drains holds a batch for minutes while it is replayed: the
      // alarm is that it cannot drain (its oldest batch waiting 15 minutes); one that nothing
      // drains alarms at its first message.
      trigger.failureQueue
        ? new Alarm(scope, `${pascal(worker.name)}FailureDestinationAlarm`, {
            alarmDescription: lookHere(
              `tillgate ${stage} ${worker.name}: ${trigger.table} stream batches given up on after every retry wait in the on-failure queue for 15 minutes: ${trigger.onCall.givenUp}`,
            ),
            metric: failures.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
            threshold: 15 * 60,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: TreatMissingData.NOT_BREACHING,
          })
        : new Alarm(scope, `${pascal(worker.name)}FailureDestinationAlarm`, {
            alarmDescription: lookHere(
              `tillgate ${stage} ${worker.name}: ${trigger.table} stream records went to the on-failure queue after every retry: ${trigger.onCall.givenUp}`,
            ),
            metric: failures.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
            threshold: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: TreatMissingData.NOT_BREACHING,
          }),
    );
  }
  return alarms;
}

/**
 * Each queue of functions/queues.ts: dead letters (its worker failed on a message every time it
 * was handed over), and, where its row asks for it, its oldest message waiting too long; what
 * that means and where to look is its row's (`onCall`).
 */
function queueAlarms(scope: Construct, workers: Workers, stage: string, lookHere: (what: string) => string): Alarm[] {
  const alarms: Alarm[] = [];
  for (const queueId of queueIds) {
    const { onCall } = queueSpecs[queueId];
    const consumer = workerRows.find((w) => w.trigger.kind === 'queue' && w.trigger.queue === queueId);
    const receives = consumer?.trigger.kind === 'queue' ? consumer.trigger.maxReceiveCount : 5;
    alarms.push(
      new Alarm(scope, `${pascal(queueId)}DeadLetterAlarm`, {
        alarmDescription: lookHere(
          `tillgate ${stage} queue ${queueId}: messages reached its dead-letter queue: its worker failed on them ${receives} times ${onCall.deadLetter}`,
        ),
        metric: workers.deadLetterQueues[queueId].metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    if (!('oldest' in onCall)) continue;
    alarms.push(
      new Alarm(scope, `${pascal(queueId)}OldestMessageAlarm`, {
        alarmDescription: lookHere(`tillgate ${stage} queue ${queueId}: a message has waited more than ${onCall.oldest.seconds} s: ${onCall.oldest.late}`),
        metric: workers.queues[queueId].metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: onCall.oldest.seconds,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  return alarms;
}

/** Webhooks: attempts failing. */
function webhookAlarms(scope: Construct, stage: string, query: string, lookHere: (what: string) => string): Alarm[] {
  const look = (what: string) => lookHere(`${what} One endpoint's attempts: saved query ${query}.`);
  const alarms: Alarm[] = [];
  alarms.push(
    new Alarm(scope, 'WebhookDeliveriesFailingAlarm', {
      alarmDescription: look(
        `tillgate ${stage} webhooks: more than half of the delivery attempts failed (5-minute windows with at least 20 attempts), ` +
          'in 2 of the last 3. One receiver down shows here too: find it by origin before suspecting the sender.',
      ),
      metric: new MathExpression({
        expression: 'IF(attempts >= 20, 100 * failed / attempts, 0)',
        usingMetrics: { attempts: webhookMetric(stage, 'WebhookAttempts', 'Sum'), failed: webhookMetric(stage, 'WebhookAttemptsFailed', 'Sum') },
        period: FIVE_MINUTES,
        label: 'webhook attempts failed (%)',
      }),
      threshold: 50,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
  );
  return alarms;
}

function webhookWidgets(workers: Workers, stage: string): GraphWidget[] {
  const minute = Duration.minutes(1);
  return [
    new GraphWidget({
      title: 'Webhooks: attempts, failed attempts, deliveries failed for good',
      left: [
        webhookMetric(stage, 'WebhookAttempts', 'Sum', minute, 'attempts'),
        webhookMetric(stage, 'WebhookAttemptsFailed', 'Sum', minute, 'failed attempts'),
        webhookMetric(stage, 'WebhookDeliveriesFailed', 'Sum', minute, 'deliveries failed'),
        webhookMetric(stage, 'WebhookDeliveriesCreated', 'Sum', minute, 'deliveries created'),
      ],
      width: 8,
    }),
    new GraphWidget({
      title: "Webhooks: attempt duration (ms); stream workers' iterator age (ms)",
      left: [
        webhookMetric(stage, 'WebhookAttemptDuration', 'p50', minute, 'attempt p50'),
        webhookMetric(stage, 'WebhookAttemptDuration', 'p99', minute, 'attempt p99'),
      ],
      right: [...workers.functions.entries()]
        .filter(([name]) => workers.failureQueues.has(name))
        .map(([name, fn]) => fn.metric('IteratorAge', { period: minute, statistic: 'Maximum', label: `${name} iterator age` })),
      width: 8,
    }),
    new GraphWidget({
      title: "Webhooks: queue depth, oldest message (s), dead letters; stream workers' records given up on",
      left: [
        ...Object.entries(workers.queues).map(([id, queue]) => queue.metricApproximateNumberOfMessagesVisible({ period: minute, label: `${id} visible` })),
        ...Object.entries(workers.queues).map(([id, queue]) =>
          queue.metricApproximateNumberOfMessagesNotVisible({ period: minute, label: `${id} delayed or in flight` }),
        ),
        ...Object.entries(workers.deadLetterQueues).map(([id, queue]) =>
          queue.metricApproximateNumberOfMessagesVisible({ period: minute, label: `${id} dead letters` }),
        ),
        ...[...workers.failureQueues].map(([name, queue]) => queue.metricApproximateNumberOfMessagesVisible({ period: minute, label: `${name} failures` })),
      ],
      right: Object.entries(workers.queues).map(([id, queue]) => queue.metricApproximateAgeOfOldestMessage({ period: minute, label: `${id} oldest (s)` })),
      width: 8,
    }),
  ];
}

function pascal(id: string): string {
  return id.charAt(0).toUpperCase() + id.slice(1);
}
