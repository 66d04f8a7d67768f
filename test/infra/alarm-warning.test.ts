import { hosts, routes } from '../../functions/routes.ts';
import { tableIds } from '../../functions/tables.ts';
import { queueIds, queues } from '../../functions/queues.ts';
import { workers } from '../../functions/workers.ts';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/build.ts';
import { ALARMS_NOTIFY_NOBODY } from '../../infra/tillgate-stack.ts';

/**
 * A production stage whose alarms notify nobody is refused loudly at synth time: `cdk synth`
 * and `cdk deploy` print the warning (and `--strict` fails on it). Only the construct tree is
 * built (no synth, no bundling): the warning is recorded on the stack when it is constructed.
 */
function warningsFor(context: Record<string, string>): string[] {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
  const stack = buildApp(app);
  return stack.node.metadata.filter((entry) => entry.type === 'aws:cdk:warning').map((entry) => String(entry.data));
}

/**
 * Two per API, per function (routes and workers) and per table, and the webhook alarms: attempts
 * failing, two per stream worker (iterator age, failure destination), one per queue (dead
 * letters) (infra/constructs/observability.ts): the count follows the declarations.
 */
const streamWorkers = workers.filter((w) => w.trigger.kind === 'stream').length;
// Each queue's dead letters, and the oldest message of those whose row watches it (functions/queues.ts, onCall).
const watchedQueues = queueIds.filter((id) => 'oldest' in queues[id].onCall).length;
const ALARMS = 2 * (Object.keys(hosts).length + routes.length + workers.length + tableIds.length) + 1 + 2 * streamWorkers + queueIds.length + watchedQueues;
const WARNING =
  `Stage "prod" is a production stage (ephemeral is not set) and its ${ALARMS} alarms notify nobody: deploy with ` +
  '-c alarmEmail=… and/or -c alarmTopicArn=… (see docs/deploying.md, "Deploy"). ' +
  `[ack: ${ALARMS_NOTIFY_NOBODY}]`;

describe('alarms that notify nobody', () => {
  it('warn at synth time on a production stage without alarmEmail or alarmTopicArn, counting the alarms', () => {
    expect(warningsFor({})).toEqual([WARNING]);
    expect(warningsFor({ stage: 'eu' })).toEqual([WARNING.replace('"prod"', '"eu"')]);
  });

  it.each([
    ['an alarm e-mail', { alarmEmail: 'oncall@example.com' }],
    ['an alarm topic', { alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:pager' }],
    ['a throwaway stage', { stage: 'dev', ephemeral: 'true' }],
  ])('do not warn with %s', (_, context) => {
    expect(warningsFor(context)).toEqual([]);
  });
});
