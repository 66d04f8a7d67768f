import { afterAll, beforeAll, vi } from 'vitest';
import { queueIds, type QueueId } from '../../../functions/queues.ts';
import type { QueuedMessage } from '../../../functions/webhooks/delivery-queue.ts';
import { startSqsEndpoint, type LocalSqsEndpoint } from '../../../local/sqs-endpoint.ts';

/**
 * The local SQS endpoint with a stand-in behind every queue that keeps what it is sent and runs
 * nothing: for the suites that call the fan-out and the sender themselves and hand the messages
 * on as they choose (webhooks/faults.test.ts, webhooks/secrets-at-rest.test.ts). Registers the
 * hooks: started, with the functions' SQS settings stubbed to it, before the file's tests; closed
 * after. Returns the list the messages are kept in, in the order sent (empty it with `length = 0`).
 */
export function useQueueStandIns(): QueuedMessage[] {
  const queued: QueuedMessage[] = [];
  let sqs: LocalSqsEndpoint | undefined;
  beforeAll(async () => {
    const keep = { send: async (messages: QueuedMessage[]) => void queued.push(...messages) };
    sqs = await startSqsEndpoint(Object.fromEntries(queueIds.map((id) => [id, keep])) as Record<QueueId, typeof keep>);
    for (const [name, value] of Object.entries(sqs.environment)) vi.stubEnv(name, value);
  });
  afterAll(async () => {
    await sqs?.close();
    vi.unstubAllEnvs();
  });
  return queued;
}
