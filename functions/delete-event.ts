import { acknowledged, api, positiveIntegerParameter } from '#commons/api';
import { notFound } from '#commons/errors';
import { deleteEvent } from '#commons/data/events';

export const handler = api({ host: 'core', operationId: 'deleteEvent' }).handler(async (event, context) => {
  const id = positiveIntegerParameter(event, 'id');
  if (!(await deleteEvent(context.accountId, id, new Date()))) throw notFound(`Event ${id} not found`);
  return acknowledged();
});
