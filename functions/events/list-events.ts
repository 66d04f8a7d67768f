import { api } from '#http/chain';
import { ok } from '#http/reply';
import { listEvents } from '#data/events';
import { pageBody, pageOf } from '#http/pagination';
import { presentEvent } from './presenters.ts';
import listQuery from '#http/schemas/listQuery.generated';

/**
 * The feed: the account's live events (neither acknowledged nor expired) in ascending id order.
 * Ids are allocated before their write commits, so an event can commit behind a page already
 * read; the feed is a queue, and a poller that starts each round from the first page and
 * acknowledges what it processed (DELETE) sees every event.
 */
export const handler = api<null, null, { limit?: string; cursor?: string }>({
  host: 'core',
  operationId: 'listEvents',
  query: listQuery,
}).handler(async (event, context) => {
  const page = await pageOf(event.query, context.accountId, 'events');
  const result = await listEvents(context.accountId, page.afterId, page.limit, new Date());
  return ok(await pageBody('events', result, presentEvent, context.accountId, 'events'));
});
