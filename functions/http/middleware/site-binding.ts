import { siteNotAllowed } from '#http/errors';
import type { ApiMiddleware } from '#http/request';

/**
 * Hand-written: tills bound to their sites (PRODUCT.md, "Accounts and tokens"). A `pos` token
 * bound to sites (`npm run tokens -- create --scope pos --site S-0042`) may void, redeem and
 * check only for those site_ids, compared exactly as site_ids are; any other answers 403 with a
 * cashier text naming the site. A token without sites serves every site. It runs after the body
 * is validated (the site_id it compares is then a string of 1 to 128 characters) and before the
 * handler, so a refused till reads and writes nothing, and counts no unknown code.
 */
export function siteBinding(): ApiMiddleware {
  return {
    before: (request) => {
      const { sites } = request.context;
      if (sites === undefined) return;
      const siteId = (request.event.body as { site_id?: unknown } | null)?.site_id;
      if (typeof siteId !== 'string' || !sites.includes(siteId)) throw siteNotAllowed(String(siteId));
    },
  };
}
