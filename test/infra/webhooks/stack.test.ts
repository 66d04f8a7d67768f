import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { queues as queueSpecs } from '#functions/queues';
import { workers } from '#functions/workers';
import { keys } from '#functions/secrets';
import { KEY_ADMINISTRATION } from '../../../infra/constructs/keys.ts';
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
    // GetItem to sign; UpdateItem to encrypt in place a secret stored in text before encryption.
    expect(actionsOn(idOf(synth.stack.workers.functions.get('sendWebhookDeliveries')!.executionRole), secrets)).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
    ]);
  });

  it('gives the stream to the fan-out and its replay only (the replay: GetShardIterator and GetRecords, nothing else)', () => {
    const events = idOf(synth.stack.dataTables.byId.events.table);
    for (const [name, fn] of synth.stack.workers.functions) {
      const streamActions = actionsOn(idOf(fn.executionRole), events).filter((a) => /Stream|Shard|GetRecords/.test(a));
      expect(streamActions.length > 0, name).toBe(name === 'fanOutWebhookEvents' || name === 'replayFailedFanOuts');
      if (name === 'replayFailedFanOuts') expect(streamActions.sort()).toEqual(['dynamodb:GetRecords', 'dynamodb:GetShardIterator']);
    }
  });

  it("drains the fan-out's on-failure queue: the replay's event source, a dead-letter queue, and alarms when it cannot drain", () => {
    const failures = synth.stack.workers.failureQueues.get('fanOutWebhookEvents')!;
    expect(failures).toBe(synth.stack.workers.queues.fanOutFailures);
    const mapping = mappingOf(synth.stack.workers.functions.get('replayFailedFanOuts')!);
    expect(JSON.stringify(mapping.EventSourceArn)).toContain(idOf(failures));
    expect(mapping).toMatchObject({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    const [, queue] = ofType('AWS::SQS::Queue').find(([id]) => id === idOf(failures))!;
    expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBe(10);
    expect(queue.Properties.VisibilityTimeout).toBe(360);
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([id, a]) => [id, a.Properties] as const);
    const [, drain] = alarms.find(([id]) => id.includes('FanOutWebhookEventsFailureDestinationAlarm'))!;
    expect(drain).toMatchObject({ MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 900 });
    expect(JSON.stringify(drain.Dimensions)).toContain(idOf(failures));
    const [, dead] = alarms.find(([id]) => id.includes('FanOutFailuresDeadLetterAlarm'))!;
    expect(JSON.stringify(dead.Dimensions)).toContain(idOf(synth.stack.workers.deadLetterQueues.fanOutFailures));
    expect(JSON.stringify(dead.AlarmDescription)).toContain('Fan-out batches given up on');
  });

  it('declares the claim lease between the sender timeout and the deliveries queue visibility', () => {
    const sender = workers.find((w) => w.name === 'sendWebhookDeliveries')!;
    const lease = queueSpecs.webhookDeliveries.claimLeaseSeconds;
    expect(sender.timeoutSeconds).toBeLessThan(lease);
    expect(lease).toBeLessThan(queueSpecs.webhookDeliveries.visibilityTimeoutSeconds);
    const [, queue] = ofType('AWS::SQS::Queue').find(([id]) => id === idOf(synth.stack.workers.queues.webhookDeliveries))!;
    expect(queue.Properties.VisibilityTimeout).toBe(queueSpecs.webhookDeliveries.visibilityTimeoutSeconds);
  });

  it('never sets the local-only settings in AWS (http:// and loopback URLs, a shorter schedule or time-out, concurrent invocations)', () => {
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const variables = Object.keys(fn.Properties.Environment?.Variables ?? {});
      expect(variables).not.toContain('TILLGATE_LOCAL_WEBHOOKS');
      expect(variables).not.toContain('WEBHOOK_RETRY_SCHEDULE');
      expect(variables).not.toContain('WEBHOOK_TIMEOUT_MS');
      expect(variables).not.toContain('WEBHOOK_LEASE_SECONDS');
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
    for (const alarm of byId('WebhookDeliveriesFailingAlarm')) {
      expect(JSON.stringify(alarm.AlarmDescription)).toContain('tillgate-prod/webhook-deliveries-of-one-endpoint');
    }
    const webhookDeadLetters = [...byId('WebhookDeliveriesDeadLetterAlarm'), ...byId('WebhookRetriesDeadLetterAlarm')];
    expect(webhookDeadLetters).toHaveLength(2);
    for (const alarm of [...iterator, ...givenUp, ...webhookDeadLetters]) {
      expect(JSON.stringify(alarm.AlarmDescription)).toContain('saved query webhook-deliveries-of-one-endpoint');
    }
    const [, query] = ofType('AWS::Logs::QueryDefinition').find(([, q]) => q.Properties.Name === 'tillgate-prod/webhook-deliveries-of-one-endpoint')!;
    expect(query.Properties.QueryString).toContain('filter message = "webhook attempt"');
    expect(query.Properties.QueryString).toContain('account_id = PASTE-ACCOUNT-ID and endpoint_id = PASTE-ENDPOINT-ID');
    const dashboard = JSON.stringify(ofType('AWS::CloudWatch::Dashboard')[0]![1].Properties.DashboardBody);
    expect(dashboard).toContain('WebhookAttempts');
    expect(dashboard).toContain('IteratorAge');
    expect(dashboard).toContain('ApproximateAgeOfOldestMessage');
  });
});

/**
 * The customer-managed key that encrypts the signing secrets' data keys: only the routes that make
 * or rotate a secret may generate data keys with it (encrypt), only the sender may decrypt; the
 * account may administer it and not use it. What would fail: a grant to another function, Decrypt
 * for a route, an account-wide `kms:*` (the CDK default policy), rotation off, a key that goes with
 * a production stack.
 */
describe('the webhook secrets key', () => {
  const context = { StringEquals: { 'kms:EncryptionContext:tillgate:use': 'webhook-signing-secrets' } };
  const keyResource = () => resources[idOf(synth.stack.keys.byId.webhookSecrets)]!;
  const roleArn = (name: string) => {
    const fn = synth.stack.functions.get(name) ?? synth.stack.workers.functions.get(name)!;
    return { 'Fn::GetAtt': [idOf(fn.executionRole), 'Arn'] };
  };

  it('is one symmetric key, rotated yearly by KMS, retained with a production stack', () => {
    expect(ofType('AWS::KMS::Key').map(([id]) => id)).toEqual([idOf(synth.stack.keys.byId.webhookSecrets)]);
    const key = keyResource();
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(key.Properties.PendingWindowInDays).toBe(30);
    expect((key as any).DeletionPolicy).toBe('Retain');
    expect((key as any).UpdateReplacePolicy).toBe('Retain');
    // As the tables: the one it protects is retained too.
    expect((resources[idOf(synth.stack.dataTables.byId.webhookSecrets.table)] as any).DeletionPolicy).toBe('Retain');
  });

  it('has a policy that lets the account administer it, the two routes that make secrets generate data keys, and the sender decrypt; nothing else', () => {
    const statements = keyResource().Properties.KeyPolicy.Statement as any[];
    const account = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] };
    // Who may do what, under which condition, one line per principal and action (CDK merges statements as it likes).
    const granted = statements
      .flatMap((statement) => {
        expect(statement.Effect).toBe('Allow');
        expect(statement.Resource).toBe('*');
        return [statement.Principal.AWS]
          .flat()
          .flatMap((principal: unknown) => [statement.Action].flat().map((action: string) => JSON.stringify([principal, action, statement.Condition ?? null])));
      })
      .sort();
    const line = (principal: unknown, action: string, condition: unknown = context) => JSON.stringify([principal, action, condition]);
    expect(granted).toEqual(
      [
        ...KEY_ADMINISTRATION.map((action) => line(account, action, null)),
        line(roleArn('createWebhookEndpoint'), 'kms:GenerateDataKey'),
        line(roleArn('rotateWebhookSecret'), 'kms:GenerateDataKey'),
        line(roleArn('sendWebhookDeliveries'), 'kms:Decrypt'),
        line(roleArn('sendWebhookDeliveries'), 'kms:GenerateDataKey'),
      ].sort(),
    );
    // The account's statement grants no use of the key, wildcards included.
    for (const action of KEY_ADMINISTRATION) expect(action, action).not.toMatch(/^kms:(\*|Encrypt|Decrypt|ReEncrypt|GenerateDataKey)/);
    expect(keys.webhookSecrets.encryptionContext).toEqual({ 'tillgate:use': 'webhook-signing-secrets' });
  });

  it('is named by the IAM policies of exactly those three roles, with the same actions and context, and given to their functions by ARN only', () => {
    const key = idOf(synth.stack.keys.byId.webhookSecrets);
    const byRole = new Map<string, unknown[]>();
    for (const [, policy] of ofType('AWS::IAM::Policy')) {
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        const kms = [statement.Action].flat().some((a: string) => a.startsWith('kms:'));
        if (!kms && !JSON.stringify(statement).includes(`"${key}"`)) continue;
        for (const role of policy.Properties.Roles) byRole.set(role.Ref, [...(byRole.get(role.Ref) ?? []), statement]);
      }
    }
    const expected = (name: string, action: string | string[]) => [
      roleArn(name)['Fn::GetAtt'][0],
      [{ Action: action, Condition: context, Effect: 'Allow', Resource: { 'Fn::GetAtt': [key, 'Arn'] } }],
    ];
    expect(Object.fromEntries(byRole)).toEqual(
      Object.fromEntries([
        expected('createWebhookEndpoint', 'kms:GenerateDataKey'),
        expected('rotateWebhookSecret', 'kms:GenerateDataKey'),
        expected('sendWebhookDeliveries', ['kms:Decrypt', 'kms:GenerateDataKey']),
      ]),
    );
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      const variables = fn.Properties.Environment?.Variables ?? {};
      expect(variables).not.toHaveProperty(keys.webhookSecrets.localEnvVar);
    }
    expect(synth.template.toJSON().Outputs.WebhookSecretsKeyArn.Value).toEqual({ 'Fn::GetAtt': [key, 'Arn'] });
  });
});
