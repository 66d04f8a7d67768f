import { beforeAll, describe, expect, it } from 'vitest';
import { synthesize, TemplateResources, type Synthesized } from '../synth.ts';

/**
 * The AWS side of the finalisation of cut-off issuances (functions/codes/finalise-issuances.ts),
 * which the local stack's in-process queue stands in for: the delayed queue issueCodes sends to,
 * the worker's event source and grants, and the alarms that say when codes stay out of the list.
 */
let t: TemplateResources;
let synth: Synthesized;
let resources: TemplateResources['resources'];
const ofType = (type: string) => t.ofType(type);
const idOf = (construct: { node: { defaultChild?: unknown } }) => t.idOf(construct);
const actionsOn = (roleId: string, resourceId: string) => t.actionsOn(roleId, resourceId);

beforeAll(() => {
  synth = synthesize();
  t = new TemplateResources(synth);
  resources = t.resources;
});

describe('finalising cut-off issuances in AWS', () => {
  it('a standard, encrypted queue with a visibility of six times the worker timeout and a dead-letter queue after 5 receives', () => {
    const queue = synth.stack.workers.queues.issuanceFinalisation;
    const properties = resources[idOf(queue)]!.Properties;
    expect(properties.FifoQueue).toBeUndefined();
    expect(properties).toMatchObject({ VisibilityTimeout: 120, MessageRetentionPeriod: 14 * 86_400, SqsManagedSseEnabled: true });
    const dlq = synth.stack.workers.deadLetterQueues.issuanceFinalisation;
    expect(properties.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [idOf(dlq), 'Arn'] }, maxReceiveCount: 5 });
    expect(resources[idOf(synth.stack.workers.functions.get('finaliseIssuances')!)]!.Properties.Timeout).toBe(20);
  });

  it('issueCodes may send to it (and is told where), and sets no delay of its own: 30 s in AWS', () => {
    const route = synth.stack.functions.get('issueCodes')!;
    const queue = synth.stack.workers.queues.issuanceFinalisation;
    const variables = resources[idOf(route)]!.Properties.Environment.Variables;
    expect(variables.ISSUANCE_FINALISATION_QUEUE_URL).toEqual({ Ref: idOf(queue) });
    expect(actionsOn(idOf(route.executionRole), idOf(queue))).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect(Object.keys(fn.Properties.Environment?.Variables ?? {})).not.toContain('ISSUANCE_FINALISATION_DELAY_SECONDS');
    }
  });

  it('feeds finaliseIssuances in batches of 10 with partial failures, at most 5 at once; it reads and updates codes only, and sends back to its queue', () => {
    const fn = synth.stack.workers.functions.get('finaliseIssuances')!;
    const queue = synth.stack.workers.queues.issuanceFinalisation;
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FunctionName.Ref === idOf(fn));
    expect(mappings).toHaveLength(1);
    expect(mappings[0]![1].Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [idOf(queue), 'Arn'] },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    const role = idOf(fn.executionRole);
    expect(actionsOn(role, idOf(synth.stack.dataTables.byId.codes.table))).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    for (const { id, table } of Object.values(synth.stack.dataTables.byId)) {
      if (id !== 'codes') expect(actionsOn(role, idOf(table)), id).toEqual([]);
    }
    expect(actionsOn(role, idOf(queue))).toEqual(
      expect.arrayContaining(['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:ReceiveMessage', 'sqs:SendMessage']),
    );
    expect(resources[idOf(fn)]!.Properties.Environment.Variables.ISSUANCE_FINALISATION_QUEUE_URL).toEqual({ Ref: idOf(queue) });
  });

  it('alarms on a message older than 4 minutes (codes left out of the list for that long) and on dead letters, each saying what it means', () => {
    const alarms = Object.fromEntries(ofType('AWS::CloudWatch::Alarm').map(([id, a]) => [id, a.Properties] as const));
    const named = (fragment: string) => Object.entries(alarms).filter(([id]) => id.includes(fragment));
    const [[, oldest]] = named('IssuanceFinalisationOldestMessageAlarm') as [[string, Record<string, any>]];
    expect(oldest).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 240,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(JSON.stringify(oldest.Dimensions)).toContain(idOf(synth.stack.workers.queues.issuanceFinalisation));
    expect(JSON.stringify(oldest.AlarmDescription)).toContain("redeemable but missing from their generator's list");
    const [[, deadLetters]] = named('IssuanceFinalisationDeadLetterAlarm') as [[string, Record<string, any>]];
    expect(deadLetters).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(JSON.stringify(deadLetters.Dimensions)).toContain(idOf(synth.stack.workers.deadLetterQueues.issuanceFinalisation));
    for (const alarm of [oldest, deadLetters]) expect(JSON.stringify(alarm.AlarmDescription)).toContain('docs/operations.md, \\"Issuances not finalised\\"');
  });
});
