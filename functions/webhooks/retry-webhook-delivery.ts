import { api } from '#http/chain';
import type { Reply } from '#http/reply';
import { conflict, notFound } from '#http/errors';
import { findDelivery, restartDelivery } from '#data/webhook-deliveries';
import { findEndpoint } from '#data/webhook-endpoints';
import { presentDelivery } from './presenters.ts';
import deliveryPath from '#http/schemas/deliveryPath.generated';
import emptyObject from '#http/schemas/emptyObject.generated';
import { enqueueDue, placeOf } from './delivery-queue.ts';
import { earnedLanes } from './lanes.ts';

/**
 * Sends the event again now, signed afresh, whatever the delivery's state (a `failed` one too):
 * a new generation of the delivery, so a retry already waiting in the queue becomes stale and
 * sends nothing. Should the attempt fail, the schedule goes on from the delivery's attempts.
 */
export const handler = api<Record<string, never>, { id: number; event_id: number }>({
  host: 'core',
  operationId: 'retryWebhookDelivery',
  params: deliveryPath,
  body: emptyObject,
}).handler(async (event, context): Promise<Reply> => {
  const { id, event_id: eventId } = event.params;
  const endpoint = await findEndpoint(context.accountId, id);
  if (!endpoint) throw notFound(`Webhook endpoint ${id} not found`);
  const missing = () => notFound(`Webhook endpoint ${id} has no delivery of event ${eventId}`);
  if (!(await findDelivery(context.accountId, id, eventId))) throw missing();
  if (endpoint.status !== 'enabled') throw conflict(`Webhook endpoint ${id} is disabled: enable it (PATCH status "enabled") before retrying`);
  const now = new Date();
  const delivery = await restartDelivery(context.accountId, id, eventId, now);
  if (!delivery) throw missing();
  await enqueueDue([
    {
      account_id: context.accountId,
      endpoint_id: id,
      event_id: eventId,
      generation: delivery.generation,
      attempts: delivery.attempts,
      due_at: now.getTime(),
      // Among the lanes it has earned: the sender moves it if the account's share is smaller.
      ...placeOf(endpoint, eventId, earnedLanes(endpoint)),
    },
  ]);
  return { statusCode: 202, body: { delivery: presentDelivery(delivery) } };
});
