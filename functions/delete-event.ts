import { acknowledged, api } from '#commons/api';
import { notFound } from '#commons/errors';
import { deleteEvent } from '#commons/data/events';
import idPath from '#commons/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'deleteEvent', path: idPath }).handler(async (event, context) => {
  const { id } = event.params;
  if (!(await deleteEvent(context.accountId, id, new Date()))) throw notFound(`Event ${id} not found`);
  return acknowledged();
});
