import { api } from '#http/chain';
import { acknowledged } from '#http/reply';
import { notFound } from '#http/errors';
import { deleteEvent } from '#data/events';
import idPath from '#http/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'deleteEvent', params: idPath }).handler(async (event, context) => {
  const { id } = event.params;
  if (!(await deleteEvent(context.accountId, id, new Date()))) throw notFound(`Event ${id} not found`);
  return acknowledged();
});
