import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findCodeGenerator } from '#data/code-generators';
import { listCodes, type CodeView } from '#data/codes';
import { codePageOf, pageBody } from '#http/pagination';
import { presentListedCode } from './presenters.ts';
import codeListQuery from '#http/schemas/codeListQuery.generated';
import idPath from '#http/schemas/idPath.generated';

/**
 * A generator's issued codes in code order, each as GET …/codes/{code} shows it, optionally only
 * the redeemed (or unredeemed) ones: one Query on a sparse index, full pages, beside a read of the
 * generator (its current max_redemptions_per_code, and a 404 for one that is not the caller's).
 * The indexes lag a redemption or a release by about a second, and a multi-use code's
 * times_redeemed what its shards hold by as long as the stream worker takes to roll them up.
 */
export const handler = api<null, { id: number }, { limit?: string; cursor?: string; redeemed?: string }>({
  host: 'core',
  operationId: 'listCodes',
  params: idPath,
  query: codeListQuery,
}).handler(async (event, context) => {
  const { id } = event.params;
  const redeemed = event.query.redeemed === undefined ? undefined : event.query.redeemed === 'true';
  const filters = `codes?generator=${id}${redeemed === undefined ? '' : `&redeemed=${redeemed}`}`;
  const page = await codePageOf(event.query, context.accountId, filters);
  const [generator, result] = await Promise.all([
    findCodeGenerator(context.accountId, id),
    listCodes(context.accountId, id, { redeemed, afterCode: page.afterCode, limit: page.limit }),
  ]);
  if (!generator) throw notFound(`Code generator ${id} not found`);
  const max = generator.max_redemptions_per_code;
  return ok(
    await pageBody(
      'codes',
      result,
      (code: CodeView) => presentListedCode(code, max),
      context.accountId,
      filters,
      (code) => code.code,
    ),
  );
});
