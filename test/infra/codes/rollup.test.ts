import { beforeAll, describe, expect, it } from 'vitest';
import { logicalId, synthesize, type Synthesized } from '../synth.ts';

/**
 * The AWS side of the uses rollup (functions/codes/roll-up-*.ts), which the local stream reader
 * stands in for: the shard tables' streams, each worker's event source (INSERTs and MODIFYs),
 * their grants, and their alarms.
 */
type Resource = { Type: string; Properties: Record<string, any> };
let synth: Synthesized;
let resources: Record<string, Resource>;
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const idOf = (construct: { node: { defaultChild?: unknown } }) => logicalId(synth.stack, construct);

beforeAll(() => {
  synth = synthesize();
  resources = synth.template.toJSON().Resources as Record<string, Resource>;
});

const ROLLUPS = [
  { worker: 'rollUpPromotionUses', table: 'promotionShards', writes: 'codeGenerators' },
  { worker: 'rollUpCodeUses', table: 'codeShards', writes: 'codes' },
] as const;

describe('the uses rollup in AWS', () => {
  it.each(ROLLUPS)('streams new images of $table', ({ table }) => {
    expect(resources[idOf(synth.stack.dataTables.byId[table].table)]!.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  });

  it.each(ROLLUPS)(
    '$worker reads the $table stream: INSERTs and MODIFYs, bisected, partial failures, bounded retries and age, a failure queue',
    ({ worker, table }) => {
      const fn = synth.stack.workers.functions.get(worker)!;
      const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([, m]) => m.Properties.FunctionName.Ref === idOf(fn));
      expect(mappings).toHaveLength(1);
      const mapping = mappings[0]![1].Properties;
      expect(mapping.EventSourceArn).toEqual({ 'Fn::GetAtt': [idOf(synth.stack.dataTables.byId[table].table), 'StreamArn'] });
      expect(mapping.FilterCriteria).toEqual({ Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT', 'MODIFY'] }) }] });
      expect(mapping).toMatchObject({
        StartingPosition: 'LATEST',
        BatchSize: 1000,
        BisectBatchOnFunctionError: true,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        MaximumRetryAttempts: 8,
        MaximumRecordAgeInSeconds: 24 * 3600,
      });
      const failures = synth.stack.workers.failureQueues.get(worker)!;
      expect(mapping.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': [idOf(failures), 'Arn'] } } });
    },
  );

  it.each(ROLLUPS)('$worker: alarms on its stream read late and on records given up on, each saying what that means', ({ worker, table }) => {
    const alarms = Object.fromEntries(ofType('AWS::CloudWatch::Alarm').map(([id, a]) => [id, a.Properties] as const));
    const named = (suffix: string) => Object.entries(alarms).filter(([id]) => id.includes(`${worker.charAt(0).toUpperCase()}${worker.slice(1)}${suffix}`));
    const [[, late]] = named('IteratorAgeAlarm') as [[string, Record<string, any>]];
    expect(late).toMatchObject({ MetricName: 'IteratorAge', Statistic: 'Maximum', Threshold: 60_000 });
    expect(JSON.stringify(late.AlarmDescription)).toContain(`the ${table} stream is read more than 60 s behind`);
    expect(JSON.stringify(late.AlarmDescription)).toContain('times_redeemed');
    const [[, givenUp]] = named('FailureDestinationAlarm') as [[string, Record<string, any>]];
    expect(JSON.stringify(givenUp)).toContain(idOf(synth.stack.workers.failureQueues.get(worker)!));
    expect(JSON.stringify(givenUp.AlarmDescription)).toContain('until their shards change again');
  });
});
