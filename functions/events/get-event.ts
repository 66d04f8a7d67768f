import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findEvent } from '#data/events';
import { presentEvent } from './presenters.ts';
import idPath from '#http/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getEvent', params: idPath }).handler(async (event, context) => {
  const { id } = event.params;
  // Keyed by account: another account's event answers exactly like a missing one.
  const record = await findEvent(context.accountId, id, new Date());
  if (!record) throw notFound(`Event ${id} not found`);
  return ok({ event: presentEvent(record) });
});
