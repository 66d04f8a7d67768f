import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../../functions/routes.ts';
import { workers } from '../../../functions/workers.ts';
import { synthesize, TemplateResources, type Synthesized } from '../synth.ts';

/**
 * The AWS side of exports (functions/codes/write-exports.ts), which the local S3 server and the
 * in-process queue stand in for: the bucket (encrypted, no public access, TLS only, 7 days), who
 * may write and who may sign reads, the queue and the worker, and the alarms of an export that
 * stops making progress. Each would fail on a bucket or a grant loosened in infra/.
 */
let t: TemplateResources;
let synth: Synthesized;
let resources: TemplateResources['resources'];
const idOf = (construct: { node: { defaultChild?: unknown } }) => t.idOf(construct);

beforeAll(() => {
  synth = synthesize();
  t = new TemplateResources(synth);
  resources = t.resources;
});

/** Every IAM statement in the template that names the bucket, by the role it is attached to. */
function bucketStatements(): Map<string, Record<string, any>[]> {
  const bucketId = idOf(synth.stack.buckets.byId.exports);
  const byRole = new Map<string, Record<string, any>[]>();
  for (const [, policy] of t.ofType('AWS::IAM::Policy')) {
    for (const statement of policy.Properties.PolicyDocument.Statement) {
      if (!JSON.stringify(statement.Resource).includes(`"${bucketId}"`)) continue;
      for (const role of policy.Properties.Roles) byRole.set(role.Ref, [...(byRole.get(role.Ref) ?? []), statement]);
    }
  }
  return byRole;
}

describe('exports in AWS', () => {
  it('one bucket: SSE-S3, every public access blocked, ACLs off, a 7-day expiry and incomplete uploads aborted after a day', () => {
    const buckets = t.ofType('AWS::S3::Bucket');
    expect(buckets).toHaveLength(1);
    const properties = resources[idOf(synth.stack.buckets.byId.exports)]!.Properties;
    expect(properties.BucketEncryption).toEqual({ ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] });
    expect(properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    expect(properties.LifecycleConfiguration).toEqual({
      Rules: [{ Id: 'expire', Status: 'Enabled', ExpirationInDays: 7, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }],
    });
    expect(properties.VersioningConfiguration).toBeUndefined();
  });

  it('its policy denies every request without TLS and allows nothing', () => {
    const bucketId = idOf(synth.stack.buckets.byId.exports);
    const policies = t.ofType('AWS::S3::BucketPolicy').filter(([, p]) => p.Properties.Bucket.Ref === bucketId);
    expect(policies).toHaveLength(1);
    const statements = policies[0]![1].Properties.PolicyDocument.Statement;
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatchObject({ Effect: 'Deny', Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } } });
  });

  it('only writeExports writes (PutObject, AbortMultipartUpload) and only getExport signs reads (GetObject), on the objects only; both are told its name', () => {
    const writer = synth.stack.workers.functions.get('writeExports')!;
    const reader = synth.stack.functions.get('getExport')!;
    const objects = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [idOf(synth.stack.buckets.byId.exports), 'Arn'] }, '/*']] };
    const byRole = bucketStatements();
    expect([...byRole.keys()].sort()).toEqual([idOf(writer.executionRole), idOf(reader.executionRole)].sort());
    expect(byRole.get(idOf(writer.executionRole))).toEqual([{ Effect: 'Allow', Action: ['s3:AbortMultipartUpload', 's3:PutObject'], Resource: objects }]);
    expect(byRole.get(idOf(reader.executionRole))).toEqual([{ Effect: 'Allow', Action: 's3:GetObject', Resource: objects }]);
    for (const fn of [writer, reader]) {
      expect(resources[idOf(fn)]!.Properties.Environment.Variables.EXPORTS_BUCKET).toEqual({ Ref: idOf(synth.stack.buckets.byId.exports) });
    }
    // The rows agree: nothing else declares the bucket.
    const declaring = [...routes.map((r) => [r.operationId, r.buckets] as const), ...workers.map((w) => [w.name, w.buckets] as const)].filter(([, b]) => b);
    expect(declaring.map(([name]) => name).sort()).toEqual(['getExport', 'writeExports']);
  });

  it('createExport sends to the exports queue, which feeds writeExports one message at a time, at most 5 at once, 3 receives before its dead-letter queue', () => {
    const queue = synth.stack.workers.queues.exports;
    const fn = synth.stack.workers.functions.get('writeExports')!;
    expect(resources[idOf(queue)]!.Properties).toMatchObject({ VisibilityTimeout: 1800, SqsManagedSseEnabled: true });
    expect(resources[idOf(queue)]!.Properties.RedrivePolicy.maxReceiveCount).toBe(3);
    expect(resources[idOf(fn)]!.Properties.Timeout).toBe(300);
    const mappings = t.ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FunctionName.Ref === idOf(fn));
    expect(mappings.map(([, m]) => m.Properties)).toEqual([
      expect.objectContaining({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'], ScalingConfig: { MaximumConcurrency: 5 } }),
    ]);
    const route = synth.stack.functions.get('createExport')!;
    expect(t.actionsOn(idOf(route.executionRole), idOf(queue))).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
  });

  it('alarms on an export waiting over 15 minutes and on dead letters, pointing at the runbook', () => {
    const alarms = t
      .ofType('AWS::CloudWatch::Alarm')
      .filter(([id]) => /^OnCallExports(OldestMessage|DeadLetter)Alarm/.test(id) || id.includes('ExportsOldest') || id.includes('ExportsDeadLetter'));
    const oldest = alarms.find(([id]) => id.includes('OldestMessage'))?.[1].Properties;
    const dead = alarms.find(([id]) => id.includes('DeadLetter'))?.[1].Properties;
    expect(oldest).toMatchObject({ MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 900 });
    expect(dead).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
    for (const alarm of [oldest, dead]) expect(JSON.stringify(alarm!.AlarmDescription)).toContain('Exports not making progress');
  });
});
