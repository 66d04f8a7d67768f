import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { workers } from '#functions/workers';
import { ACCOUNT_LANES } from '#functions/webhooks/lanes';
import { logicalId, synthesize, type Synthesized } from '../synth.ts';

/**
 * The AWS side of webhooks, which the local stack stands in for (local/webhooks.ts): the events
 * table's stream, the fan-out's event source, the delivery queue and the sender's, the grants
 * that keep signing secrets readable by the sender only, and the on-call kit.
 */
type Resource = { Type: string; Properties: Record<string, any> };
let synth: Synthesized;
let resources: Record<string, Resource>;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const idOf = (construct: { node: { defaultChild?: unknown } }) => logicalId(synth.stack, construct);
/** The properties of the one event source mapping of a function. */
const mappingOf = (fn: { node: { defaultChild?: unknown } }) => {
  const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FunctionName.Ref === idOf(fn));
  expect(mappings).toHaveLength(1);
  return mappings[0]![1].Properties;
};

beforeAll(() => {
  synth = synthesize();
  resources = synth.template.toJSON().Resources as Record<string, Resource>;
});

/** Every DynamoDB action a role is granted on a table (by the table's logical id), stream ARNs included. */
function actionsOn(roleId: string, tableLogicalId: string): string[] {
  const actions = new Set<string>();
  for (const [, policy] of ofType('AWS::IAM::Policy')) {
    if (!policy.Properties.Roles.some((r: any) => r.Ref === roleId)) continue;
    for (const statement of policy.Properties.PolicyDocument.Statement) {
      if (JSON.stringify(statement.Resource).includes(`"${tableLogicalId}"`)) [statement.Action].flat().forEach((a: string) => actions.add(a));
    }
  }
  return [...actions].sort();
}

describe('webhook plumbing in AWS', () => {
  it('streams new images of the events table', () => {
    const events = resources[idOf(synth.stack.dataTables.byId.events.table)]!;
    expect(events.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  });

  it('feeds the fan-out from the stream: INSERTs only, bisected, partial failures, bounded retries and age, a failure queue', () => {
    const fanOut = synth.stack.workers.functions.get('fanOutWebhookEvents')!;
    const mapping = mappingOf(fanOut);
    expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [idOf(synth.stack.dataTables.byId.events.table), 'StreamArn'] });
    expect(mapping).toMatchObject({
      StartingPosition: 'LATEST',
      BatchSize: 100,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 8,
      MaximumRecordAgeInSeconds: 6 * 3600,
    });
    expect(mapping.FilterCriteria).toEqual({ Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'] }) }] });
    const failures = synth.stack.workers.failureQueues.get('fanOutWebhookEvents')!;
    expect(mapping.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [idOf(failures), 'Arn'] } } });
  });

  it('feeds the sender one message at a time from a high-throughput FIFO deliveries queue (groups per account, origin and lane), with a FIFO dead-letter queue', () => {
    const sender = synth.stack.workers.functions.get('sendWebhookDeliveries')!;
    const queue = synth.stack.workers.queues.webhookDeliveries;
    const mapping = mappingOf(sender);
    // A batch of one: a FIFO batch may mix groups, and a hanging receiver would hold the others' groups until it ends.
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [idOf(queue), 'Arn'] },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      // Room for four accounts holding all their lanes at once beside everyone else's first attempts (functions/webhooks/lanes.ts).
      ScalingConfig: { MaximumConcurrency: 200 },
    });
    expect(200 - 4 * ACCOUNT_LANES).toBeGreaterThanOrEqual(ACCOUNT_LANES);
    // The sender reads the account's endpoints (their lanes are shared) with one Query, and writes only what it notes.
    const endpoints = idOf(synth.stack.dataTables.byId.webhookEndpoints.table);
    expect(actionsOn(idOf(sender.executionRole), endpoints)).toEqual(['dynamodb:Query', 'dynamodb:UpdateItem']);
    const properties = resources[idOf(queue)]!.Properties;
    expect(properties).toMatchObject({
      FifoQueue: true,
      FifoThroughputLimit: 'perMessageGroupId',
      DeduplicationScope: 'messageGroup',
      VisibilityTimeout: 180,
      MessageRetentionPeriod: 14 * 86_400,
      SqsManagedSseEnabled: true,
    });
    expect(properties.ContentBasedDeduplication).toBeUndefined();
    const dlq = synth.stack.workers.deadLetterQueues.webhookDeliveries;
    expect(properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [idOf(dlq), 'Arn'] }, maxReceiveCount: 5 });
    expect(resources[idOf(dlq)]!.Properties.FifoQueue).toBe(true);
    expect(resources[idOf(sender)]!.Properties.Timeout).toBe(30);
    const variables = resources[idOf(sender)]!.Properties.Environment.Variables;
    expect(variables.WEBHOOK_DELIVERIES_QUEUE_URL).toEqual({ Ref: idOf(queue) });
    expect(variables.WEBHOOK_RETRIES_QUEUE_URL).toEqual({ Ref: idOf(synth.stack.workers.queues.webhookRetries) });
  });

  it('delays retries on a standard queue whose forwarder moves them to the deliveries queue when due', () => {
    const forwarder = synth.stack.workers.functions.get('forwardDueWebhookDeliveries')!;
    const retries = synth.stack.workers.queues.webhookRetries;
    const mapping = mappingOf(forwarder);
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [idOf(retries), 'Arn'] },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    const properties = resources[idOf(retries)]!.Properties;
    expect(properties.FifoQueue).toBeUndefined();
    expect(properties.RedrivePolicy.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': [idOf(synth.stack.workers.deadLetterQueues.webhookRetries), 'Arn'] });
    const variables = resources[idOf(forwarder)]!.Properties.Environment.Variables;
    expect(variables.WEBHOOK_DELIVERIES_QUEUE_URL).toEqual({ Ref: idOf(synth.stack.workers.queues.webhookDeliveries) });
    expect(variables.WEBHOOK_RETRIES_QUEUE_URL).toEqual({ Ref: idOf(retries) });
  });

  it('lets only the sender read signing secrets; the routes that make, rotate and delete them only write', () => {
    const secrets = idOf(synth.stack.dataTables.byId.webhookSecrets.table);
    const readers: string[] = [];
    const all = [
      ...routes.map((r) => [r.operationId, synth.stack.functions.get(r.operationId)!] as const),
      ...workers.map((w) => [w.name, synth.stack.workers.functions.get(w.name)!] as const),
    ];
    for (const [name, fn] of all) {
      const actions = actionsOn(idOf(fn.executionRole), secrets);
      if (actions.some((a) => /Get|Query|Scan|Stream/.test(a))) readers.push(name);
      const writes: Record<string, string[]> = {
        createWebhookEndpoint: ['dynamodb:PutItem'],
        rotateWebhookSecret: ['dynamodb:UpdateItem'],
        deleteWebhookEndpoint: ['dynamodb:DeleteItem'],
      };
      if (name in writes) expect(actions, name).toEqual(writes[name]);
      else if (name !== 'sendWebhookDeliveries') expect(actions, name).toEqual([]);
    }
    expect(readers).toEqual(['sendWebhookDeliveries']);
    expect(actionsOn(idOf(synth.stack.workers.functions.get('sendWebhookDeliveries')!.executionRole), secrets)).toEqual(['dynamodb:GetItem']);
  });

  it('gives the fan-out the stream, and only the fan-out', () => {
    const events = idOf(synth.stack.dataTables.byId.events.table);
    for (const [name, fn] of synth.stack.workers.functions) {
      const streamActions = actionsOn(idOf(fn.executionRole), events).filter((a) => /Stream|Shard|GetRecords/.test(a));
      expect(streamActions.length > 0, name).toBe(name === 'fanOutWebhookEvents');
    }
  });

  it('never sets the local-only settings in AWS (http:// and loopback URLs, a shorter schedule or time-out, concurrent invocations)', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const variables = Object.keys(fn.Properties.Environment?.Variables ?? {});
      expect(variables).not.toContain('TILLGATE_LOCAL_WEBHOOKS');
      expect(variables).not.toContain('WEBHOOK_RETRY_SCHEDULE');
      expect(variables).not.toContain('WEBHOOK_TIMEOUT_MS');
      // The local stack's (local/invocation.ts): in AWS one invocation at a time per environment.
      expect(variables).not.toContain('AWS_LAMBDA_MAX_CONCURRENCY');
    }
  });

  it('alarms on failing attempts, the stream read late, its failure destination and dead letters; saves the query of one endpoint', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([id, a]) => [id, a.Properties] as const);
    const byId = (fragment: string) => alarms.filter(([id]) => id.includes(fragment)).map(([, a]) => a);
    expect(byId('WebhookDeliveriesFailingAlarm')).toHaveLength(1);
    expect(JSON.stringify(byId('WebhookDeliveriesFailingAlarm')[0]!.Metrics)).toContain('WebhookAttemptsFailed');
    const iterator = byId('FanOutWebhookEventsIteratorAgeAlarm');
    expect(iterator).toHaveLength(1);
    expect(iterator[0]).toMatchObject({ MetricName: 'IteratorAge', Statistic: 'Maximum', Threshold: 60_000 });
    const failureQueue = idOf(synth.stack.workers.failureQueues.get('fanOutWebhookEvents')!);
    const givenUp = byId('FanOutWebhookEventsFailureDestinationAlarm');
    expect(JSON.stringify(givenUp[0])).toContain(failureQueue);
    const deadLetters = JSON.stringify(byId('DeadLetterAlarm'));
    for (const dlq of Object.values(synth.stack.workers.deadLetterQueues)) expect(deadLetters).toContain(idOf(dlq));
    for (const alarm of [...byId('WebhookDeliveriesFailingAlarm'), ...byId('DeadLetterAlarm')]) {
      expect(JSON.stringify(alarm.AlarmDescription)).toContain('tillgate-prod/webhook-deliveries-of-one-endpoint');
    }
    for (const alarm of [...iterator, ...givenUp]) expect(JSON.stringify(alarm.AlarmDescription)).toContain('saved query webhook-deliveries-of-one-endpoint');
    const [, query] = ofType('AWS::Logs::QueryDefinition').find(([, q]) => q.Properties.Name === 'tillgate-prod/webhook-deliveries-of-one-endpoint')!;
    expect(query.Properties.QueryString).toContain('filter message = "webhook attempt"');
    expect(query.Properties.QueryString).toContain('account_id = PASTE-ACCOUNT-ID and endpoint_id = PASTE-ENDPOINT-ID');
    const dashboard = JSON.stringify(ofType('AWS::CloudWatch::Dashboard')[0]![1].Properties.DashboardBody);
    expect(dashboard).toContain('WebhookAttempts');
    expect(dashboard).toContain('IteratorAge');
    expect(dashboard).toContain('ApproximateAgeOfOldestMessage');
  });
});
