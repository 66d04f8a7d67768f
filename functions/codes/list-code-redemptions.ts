import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { codeSpelling, findIssuedCode } from '#data/codes';
import { codeCount, listCodeRedemptions } from '#data/code-counts';
import { shardUses } from '#data/counts';
import { pageBody, redemptionPageOf } from '#http/pagination';
import { presentCodeRedemption } from './presenters.ts';
import codePath from '#http/schemas/codePath.generated';
import codeRedemptionListQuery from '#http/schemas/codeRedemptionListQuery.generated';

/**
 * The transactions holding a code, in redemption order (time, then transaction), full pages: for
 * a code counted over shards (data/code-counts.ts), its holder records merged from the shards that
 * hold uses (one consistent BatchGetItem of the shards' counts tells which, then one Query each),
 * beside the holder its item names from when it was single-use; for any other code, that holder
 * alone, or none. Exact, as the lookup is: every read is consistent.
 */
export const handler = api<null, { id: number; code: string }, { limit?: string; cursor?: string }>({
  host: 'core',
  operationId: 'listCodeRedemptions',
  params: codePath,
  query: codeRedemptionListQuery,
}).handler(async (event, context) => {
  const { id, code } = event.params;
  // Bound to the code as issued (the key's spelling), however the path typed it.
  const filters = `redemptions?generator=${id}&code=${codeSpelling(code) ?? code}`;
  const page = await redemptionPageOf(event.query, context.accountId, filters);
  const issued = await findIssuedCode(context.accountId, id, code);
  if (!issued) throw notFound(`Code ${code} was not issued by code generator ${id}`);
  const shards = issued.pooled ? [...(await shardUses(codeCount(issued)))].filter(([, used]) => used > 0).map(([shard]) => shard) : [];
  const result = await listCodeRedemptions(issued, shards, { after: page.after, limit: page.limit });
  return ok(await pageBody('redemptions', result, presentCodeRedemption, context.accountId, filters, (redemption) => redemption.redeemed_order));
});
