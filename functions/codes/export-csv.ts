import { Readable } from 'node:stream';
import { findCodeGenerator } from '#data/code-generators';
import { listCodes } from '#data/codes';
import { presentListedCode } from './presenters.ts';

/**
 * The export's file (PRODUCT.md, "Bulk"): CSV as RFC 4180 writes it, UTF-8 without a byte-order
 * mark, CRLF line ends, a field quoted only where it holds a comma, a quote, a CR or an LF (its
 * quotes doubled), null as an empty field, times as the JSON has them. One row per code in code
 * order after the header row, each row the codes list's item (GET …/codes) of that code: the
 * rows come from the same listCodes pages and the same presenter as the list route, so the file
 * equals the list row for row, whatever the list reads.
 */
const EXPORT_COLUMNS = [
  'code',
  'code_generator_id',
  'issued_at',
  'times_redeemed',
  'max_redemptions_per_code',
  'last_redeemed_at',
  'site_id',
  'pos_transaction_id',
] as const;

/** Codes per listCodes page: the list route's largest page. */
const PAGE = 1000;

function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const csvRow = (fields: readonly (string | number | null)[]) => `${fields.map(csvField).join(',')}\r\n`;

/** One list item as its row of the file, columns in EXPORT_COLUMNS' order. */
function exportRow(item: ReturnType<typeof presentListedCode>): string {
  return csvRow([
    item.code,
    item.code_generator_id,
    item.issued_at,
    item.times_redeemed,
    item.max_redemptions_per_code,
    item.redeemed_at,
    item.site_id,
    item.pos_transaction_id,
  ]);
}

/**
 * The file as a stream, one page of the list at a time (about 100 KB each): a page is read only
 * when the upload has taken the one before it, so memory does not grow with the file. `rows()`
 * counts the codes written so far. The generator's current maximum is read once, at the start, as
 * a page of the list reads it once.
 */
export function exportStream(accountId: number, generatorId: number, redeemed: boolean | undefined) {
  let rows = 0;
  async function* chunks(): AsyncGenerator<Buffer> {
    const generator = await findCodeGenerator(accountId, generatorId);
    if (!generator) throw new Error(`code generator ${generatorId} of account ${accountId} not found`);
    const max = generator.max_redemptions_per_code;
    yield Buffer.from(csvRow(EXPORT_COLUMNS), 'utf8');
    let afterCode: string | undefined;
    for (;;) {
      const page = await listCodes(accountId, generatorId, { redeemed, limit: PAGE, ...(afterCode !== undefined ? { afterCode } : {}) });
      let text = '';
      for (const code of page.items) text += exportRow(presentListedCode(code, max));
      rows += page.items.length;
      if (text) yield Buffer.from(text, 'utf8');
      // A page cut short by a running job's entries (listCodes) says itself where the next begins.
      const next = page.next ?? page.items.at(-1)?.code;
      if (!page.more || next === undefined) return;
      afterCode = next;
    }
  }
  return { stream: Readable.from(chunks(), { objectMode: false, highWaterMark: 1 }), rows: () => rows };
}
