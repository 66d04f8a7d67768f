import { randomUUID } from 'node:crypto';
import { completeExport, failExport, findExport, type ExportRecord } from '#data/exports';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { writeTogether } from '#data/transactions';
import { logger } from '#runtime/observability';
import { uploadStream } from '#runtime/storage';
import { messageWorker } from '#runtime/message-worker';
import { exportStream } from './export-csv.ts';
import { RECORD_WAIT_MS, sendExportMessage, type ExportMessage } from './export-messages.ts';

/**
 * The `exports` queue → the export's file on S3, then the export completed. For each message,
 * the export's record (one consistent GetItem):
 * - absent: its create has not committed yet, or never will: the message is sent again, delayed,
 *   until RECORD_WAIT_MS after it was first sent, then dropped;
 * - completed or failed: a second copy of the message: nothing to do;
 * - running: the codes list is paged into a CSV (export-csv.ts) streamed to a multipart upload of
 *   an object of this attempt's own (so two copies of a message racing never mix their files),
 *   then one transaction completes the export (if still running) naming that object, with its
 *   `export.completed` event. A copy that loses that race leaves an object nobody names, which the
 *   bucket's lifecycle rule deletes.
 * A message that fails sends a copy of itself 2, 4, 8, then 16 s later (#runtime/message-worker,
 * as every message worker); after those it is reported and comes back after the queue's
 * visibility timeout, and its last receive marks the export failed, so a client is not left
 * polling an export that nothing will write (the dead-letter queue and its alarm tell on-call).
 */
export const handler = messageWorker<ExportMessage>(
  'writeExports',
  (message) => writeExport(message, names(message)),
  async ({ message, error, retry, next }) => {
    const details = { ...(message ? names(message) : {}), retry, error };
    if (next.by === 'copy') {
      logger.warn(`export not written; a copy of its message is sent again in ${next.delaySeconds} s`, { ...details, error_code: 'export_retried' });
      return;
    }
    logger.error('export not written; the queue hands it over again', { ...details, receive_count: next.receiveCount, error_code: 'export_not_written' });
    if (next.lastReceive && message) {
      const gaveUp = await writeTogether([
        failExport({ account_id: message.account_id, id: message.export_id }, 'The export could not be written; create a new one.', new Date()),
      ]).catch(() => undefined);
      if (gaveUp?.outcome === 'written') logger.error('export failed after its last attempt', { ...names(message), error_code: 'export_failed' });
    }
  },
);

const names = (message: ExportMessage) => ({ account_id: message.account_id, export_id: message.export_id });

async function writeExport(message: ExportMessage, names: Record<string, number>): Promise<void> {
  const record = await findExport(message.account_id, message.export_id);
  if (!record) {
    if (Date.now() - message.sent_at < RECORD_WAIT_MS) await sendExportMessage(message, 1);
    else logger.info('export never created: its message is dropped', names);
    return;
  }
  if (record.status !== 'running') return;
  const started = Date.now();
  const objectKey = `${record.account_id}/${record.id}/${randomUUID()}.csv`;
  const file = exportStream(record.account_id, record.code_generator_id, record.redeemed);
  await uploadStream('exports', objectKey, file.stream, {
    contentType: 'text/csv; charset=utf-8',
    contentDisposition: `attachment; filename="export-${record.id}.csv"`,
  });
  const completed = await complete(record, file.rows(), objectKey);
  logger.info(completed ? 'export written' : 'export written by another copy of its message first', {
    ...names,
    rows: file.rows(),
    duration_ms: Date.now() - started,
  });
}

/** The export completed and its event, in one transaction; false when it had already ended. */
async function complete(record: ExportRecord, rows: number, objectKey: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = new Date();
    const eventRecord = newEvent(await nextId(), record.account_id, 'export.completed', String(record.id), now);
    const result = await writeTogether([completeExport(record, rows, objectKey, now), putEvent(eventRecord)]);
    if (result.outcome === 'written') return true;
    if (result.failed.has(0)) return false;
    freshIdCollided('events', eventRecord.id);
  }
  throw new Error('fresh event ids collided twice');
}
