import '../../support/webhooks/env.ts';
import '../../support/debug-logs.ts';
import type { Context, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { worker } from '../../../functions/runtime/worker-chain.ts';
import { deadlineSignal, withDeadline } from '../../../functions/runtime/deadline.ts';
import { captureLogs } from '../../attack/support.ts';

const { handler: sender } = await import('../../../functions/webhooks/send-webhook-deliveries.ts');

const context = (name: string) => ({ awsRequestId: `request-${name}`, functionName: name, getRemainingTimeInMillis: () => 30_000 }) as Context;

describe('the worker chain', () => {
  it("fails at load for a worker without its row in functions/workers.ts, or with another trigger than its row's", () => {
    expect(() => worker('queue', 'noSuchWorker')).toThrow('No queue worker noSuchWorker in functions/workers.ts');
    expect(() => worker('stream', 'sendWebhookDeliveries')).toThrow('No stream worker sendWebhookDeliveries');
    expect(() => worker('stream', 'fanOutWebhookEvents')).not.toThrow();
  });

  it('runs each invocation inside its own deadline, not the one of the invocation that caused it', async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const handler = worker('queue', 'forwardDueWebhookDeliveries').handler(async () => {
      seen.push(deadlineSignal());
      return { batchItemFailures: [] };
    });
    let outer: AbortSignal | undefined;
    await withDeadline(5000, async () => {
      outer = deadlineSignal();
      await handler({ Records: [] }, context('inner'));
    });
    expect(outer?.aborted).toBe(true); // the outer invocation has answered
    expect(seen[0]).toBeDefined();
    expect(seen[0]).not.toBe(outer);
  });
});

describe('the sender through Powertools batch processing (FIFO)', () => {
  const captured: string[] = [];
  beforeAll(() => captureLogs(captured));
  afterAll(() => vi.restoreAllMocks());

  it('reports a failed message and the rest of its batch, unprocessed, so a group keeps its order; a batch that failed whole is answered, not thrown', async () => {
    const record = (messageId: string, body: string) => ({ messageId, body, attributes: { MessageGroupId: 'g' } }) as unknown as SQSEvent['Records'][number];
    const unreadable = 'not a delivery message';
    const later = JSON.stringify({ due_at: Number.MAX_SAFE_INTEGER });
    captured.length = 0;
    expect(await sender({ Records: [record('a', unreadable), record('b', later), record('c', later)] }, context('sender'))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }, { itemIdentifier: 'c' }],
    });
    const failures = captured.filter((line) => line.includes('webhook message failed'));
    expect(failures).toHaveLength(1);
    expect(JSON.parse(failures[0]!)).toMatchObject({ level: 'ERROR', message_id: 'a', error_name: 'SyntaxError', function_name: 'sender' });
  });
});
