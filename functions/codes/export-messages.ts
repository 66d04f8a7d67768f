import { sendToQueue } from '#runtime/queue-client';

/**
 * The message that has an export written (functions/queues.ts, `exports`). The create route sends
 * it before it writes the export's record, so that no record exists without its message; the
 * worker that meets no record yet (the create not committed, or never to be) sends it again,
 * delayed, until RECORD_WAIT_MS after it was first sent, and then drops it.
 */
export interface ExportMessage {
  readonly account_id: number;
  readonly export_id: number;
  /** Epoch milliseconds of the first send. */
  readonly sent_at: number;
}

/** How long a message waits for its record: far past a create's 10 s timeout. */
export const RECORD_WAIT_MS = 60_000;

export const sendExportMessage = (message: ExportMessage, delaySeconds = 0) =>
  sendToQueue('exports', [{ body: JSON.stringify(message), ...(delaySeconds > 0 ? { delaySeconds } : {}) }]);
