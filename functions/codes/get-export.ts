import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound } from '#http/errors';
import { findExport } from '#data/exports';
import { presignedGet } from '#runtime/storage';
import { presentExport } from './presenters.ts';
import idPath from '#http/schemas/idPath.generated';

/** A download URL's life (PRODUCT.md): each read signs a fresh one. */
export const DOWNLOAD_URL_SECONDS = 900;

/**
 * An export of the caller's account (another account's is `404`): running, failed, or completed
 * with a download URL presigned afresh on every read, valid 15 minutes (less in AWS if the
 * role's temporary credentials that signed it expire first: docs/api.md, "Exports"), until the
 * file is deleted at `expires_at`; after that `download_url` is null.
 */
export const handler = api<null, { id: number }>({
  host: 'core',
  operationId: 'getExport',
  params: idPath,
}).handler(async (event, context) => {
  const { id } = event.params;
  const record = await findExport(context.accountId, id);
  if (!record) throw notFound(`Export ${id} not found`);
  const live = record.status === 'completed' && record.object_key !== undefined && Date.parse(record.expires_at!) > Date.now();
  const url = live ? await presignedGet('exports', record.object_key!, DOWNLOAD_URL_SECONDS) : null;
  return ok({ export: presentExport(record, url) });
});
