import { api } from '#http/chain';
import type { Reply } from '#http/reply';
import { notFound, serviceUnavailable } from '#http/errors';
import { findCodeGenerator } from '#data/code-generators';
import { newExport, putExport } from '#data/exports';
import { newStoredResponse, putStoredResponse } from '#data/idempotency-keys';
import { freshIdCollided, nextId } from '#data/ids';
import { writeTogether } from '#data/transactions';
import { idempotencyScope, replay, storedResponseAfterConflict } from '#http/idempotency';
import { queueConfigured } from '#runtime/queue-client';
import { sendExportMessage } from './export-messages.ts';
import { presentExport } from './presenters.ts';
import exportCreate from '#http/schemas/exportCreate.generated';
import idPath from '#http/schemas/idPath.generated';

/**
 * Accepts an export of a generator's codes (an inactive generator's too): `202` with the running
 * export. Its message goes to the writer first, then the record is written (with the stored
 * answer of an Idempotency-Key, in one transaction): a record always has its message, and a
 * message whose record never comes is dropped by the worker (export-messages.ts). No event here:
 * `export.completed` is written when the file is.
 */
export const handler = api<{ redeemed?: boolean }, { id: number }>({
  host: 'core',
  operationId: 'createExport',
  params: idPath,
  body: exportCreate,
}).handler(async (event, context): Promise<Reply> => {
  const { id } = event.params;
  const redeemed = event.body?.redeemed;
  const scope = idempotencyScope(event.headers, context.accountId, 'createExport', { id, ...(redeemed !== undefined ? { redeemed } : {}) });
  if (!(await findCodeGenerator(context.accountId, id))) throw notFound(`Code generator ${id} not found`);
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = new Date();
    const record = newExport(context.accountId, await nextId(), id, redeemed, now);
    const location = `/v1.0/exports/${record.id}`;
    const body = JSON.stringify({ export: presentExport(record) });
    const stored = scope && newStoredResponse(scope, scope.requestHash, { statusCode: 202, body, location }, now);
    // The CDK stack gives this function the queue (an infra test checks it); a local stack run
    // without its queue stand-ins (most test files, the bench) writes the record only.
    if (queueConfigured('exports')) await sendExportMessage({ account_id: context.accountId, export_id: record.id, sent_at: now.getTime() });
    const result = await writeTogether([putExport(record), ...(stored ? [putStoredResponse(stored)] : [])]);
    if (result.outcome === 'written') return { statusCode: 202, location, rawJson: body };
    if (scope && result.failed.has(1)) {
      const earlier = await storedResponseAfterConflict(result.failed.get(1), scope);
      if (earlier) return replay(earlier, scope);
      continue; // the stored response expired in between: create anew
    }
    if (result.failed.has(0)) freshIdCollided('exports', record.id);
  }
  throw serviceUnavailable();
});
