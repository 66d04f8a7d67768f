import { api, ok } from '#commons/api';
import { notFound } from '#commons/errors';
import { findEvent } from '#commons/data/events';
import { presentEvent } from '#commons/presenters';
import idPath from '#commons/schemas/idPath.generated';

export const handler = api<null, { id: number }>({ host: 'core', operationId: 'getEvent', path: idPath }).handler(
  async (event, context) => {
    const { id } = event.params;
    // Keyed by account: another account's event answers exactly like a missing one.
    const record = await findEvent(context.accountId, id, new Date());
    if (!record) throw notFound(`Event ${id} not found`);
    return ok({ event: presentEvent(record) });
  },
);
