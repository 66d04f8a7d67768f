import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import type { DeliveryMessage } from '../../../functions/webhooks/delivery-queue.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';

/**
 * What the lane tests read besides the receiver: the endpoint item's lanes, and what held up each
 * message of the deliveries queue.
 */

/**
 * Polls the endpoint item (a consistent read) until its origin is down to one lane (a slow answer,
 * or a failure noted with the failing streak); answers when that was seen (epoch milliseconds).
 * An attempt begun after that moment read the account's endpoints after the write (the sender's
 * Query is consistent) and obeys the one lane; one begun before may still be sent in its old lane
 * (receiver.ts attemptsBegunAfter tells them apart).
 */
export async function oneLaneSeenAt(accountId: number, endpointId: number, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Item } = await documents.send(
      new GetCommand({ TableName: tableName('webhookEndpoints'), Key: { account_id: accountId, id: endpointId }, ConsistentRead: true }),
    );
    // A failure is noted with the lanes at one (noteFailure); failing_since alone is how the code before the adaptive lanes had it.
    if (Item?.lanes === 1 || Item?.failing_since !== undefined) return Date.now();
    if (Date.now() > deadline) throw new Error(`endpoint ${endpointId} still has ${Item?.lanes ?? 'its initial'} lanes`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Watches the deliveries queue of `webhooks`, for each first attempt (endpoint and event):
 * - `poolWaitOf`: the time it waited for a sender while it was free to go (its group free) and
 *   every sender was busy, summed over its moves between lanes (local/sqs-queue.ts
 *   Dispatch.poolWaitMs): the time other lanes, origins and accounts held it up through the pool.
 *   Waiting behind its own group's earlier messages is not in it;
 * - `queuedAt`: when the fan-out sent its message (epoch milliseconds);
 * and for an endpoint, `sharingGroups`: the other endpoints whose messages (any attempt) went
 * through a FIFO group that its messages went through, those it could have waited behind.
 */
export function watchPoolWaits(webhooks: LocalWebhooks): {
  poolWaitOf(endpointId: number, eventId: string): number | undefined;
  queuedAt(endpointId: number, eventId: string): number | undefined;
  sharingGroups(endpointId: number): number[];
} {
  const waits = new Map<string, number>();
  const queued = new Map<string, number>();
  const endpointsByGroup = new Map<string, Set<number>>();
  webhooks.queues.webhookDeliveries.onDispatch = ({ message, queuedAt, poolWaitMs }) => {
    const body = JSON.parse(message.body) as DeliveryMessage;
    const group = endpointsByGroup.get(message.groupId!) ?? new Set();
    endpointsByGroup.set(message.groupId!, group.add(body.endpoint_id));
    if (body.attempts !== 0) return;
    const key = `${body.endpoint_id} ${body.event_id}`;
    waits.set(key, (waits.get(key) ?? 0) + poolWaitMs);
    if (!queued.has(key)) queued.set(key, queuedAt);
  };
  return {
    poolWaitOf: (endpointId, eventId) => waits.get(`${endpointId} ${eventId}`),
    queuedAt: (endpointId, eventId) => queued.get(`${endpointId} ${eventId}`),
    sharingGroups: (endpointId) =>
      [...new Set([...endpointsByGroup.values()].filter((endpoints) => endpoints.has(endpointId)).flatMap((endpoints) => [...endpoints]))].filter(
        (id) => id !== endpointId,
      ),
  };
}

/**
 * A request sent again after a `503` (a saturated DynamoDB Local answers one, with Retry-After),
 * up to 5 times half a second apart, as a till retries: the lane tests' set-up (endpoints, voids)
 * on a loaded machine. The request must be safe to repeat (a void of the same transaction, a create
 * with an Idempotency-Key).
 */
export async function retryingOn503<Answer extends { status: number }>(request: () => Promise<Answer>): Promise<Answer> {
  let answer = await request();
  for (let retry = 0; answer.status === 503 && retry < 5; retry++) {
    await new Promise((r) => setTimeout(r, 500));
    answer = await request();
  }
  return answer;
}
