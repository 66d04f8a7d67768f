import { api, ok } from '#commons/api';
import { notFound } from '#commons/errors';
import { findEvent } from '#commons/data/events';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getEvent', path: 'idPath' }).handler(async (event, context) => {
  const { id } = event.params;
  const record = await findEvent(context.accountId, id, new Date());
  // Another account's event answers exactly like a missing one.
  if (!record) throw notFound(`Event ${id} not found`);
  return ok({
    event: { id: record.id, type: record.type, resource_id: record.resource_id, created_at: record.created_at },
  });
});
