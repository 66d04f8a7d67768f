import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findCodeGenerator } from '#data/code-generators';
import { listCodes, type CodeView } from '#data/codes';
import { codePageOf, pageBody } from '#http/pagination';
import { presentCode } from './presenters.ts';
import codeListQuery from '#http/schemas/codeListQuery.generated';
import idPath from '#http/schemas/idPath.generated';

/**
 * A generator's issued codes in code order, each as GET …/codes/{code} shows it, optionally only
 * the redeemed (or unredeemed) ones: one Query on a sparse index, full pages. The indexes lag a
 * redemption or a release by about a second. An empty first page reads the generator, to tell
 * a generator without codes (200) from one that is not the caller's (404).
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
  const page = codePageOf(event.query, context.accountId, filters);
  const result = await listCodes(context.accountId, id, { redeemed, afterCode: page.afterCode, limit: page.limit });
  if (result.items.length === 0 && page.afterCode === undefined && !(await findCodeGenerator(context.accountId, id))) {
    throw notFound(`Code generator ${id} not found`);
  }
  return ok(
    pageBody(
      'codes',
      result,
      (code: CodeView) => presentCode(code),
      context.accountId,
      filters,
      (code) => code.code,
    ),
  );
});
