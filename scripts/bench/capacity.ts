import type { WireCall } from './proxy.ts';

/**
 * DynamoDB's item size rules (developer guide, "Item sizes and formats"), on wire-format items:
 * an attribute is its name's UTF-8 bytes plus its value's; a string its UTF-8 bytes, a number
 * about one byte per two significant digits plus one, a boolean or null one byte, a list or map
 * three bytes plus its elements plus one byte per element.
 */
function attributeValueSize(value: Record<string, any>): number {
  if ('S' in value) return Buffer.byteLength(value.S, 'utf8');
  if ('N' in value)
    return (
      Math.ceil(
        String(value.N)
          .replace(/^-|\.|^0+|e.*$/gi, '')
          .replace(/0+$/, '').length / 2,
      ) + 1
    );
  if ('B' in value) return Buffer.from(value.B, 'base64').length;
  if ('BOOL' in value || 'NULL' in value) return 1;
  if ('M' in value)
    return (
      3 +
      Object.entries(value.M as Record<string, any>).reduce((sum, [name, inner]) => sum + Buffer.byteLength(name, 'utf8') + attributeValueSize(inner) + 1, 0)
    );
  if ('L' in value) return 3 + (value.L as Record<string, any>[]).reduce((sum, inner) => sum + attributeValueSize(inner) + 1, 0);
  if ('SS' in value) return (value.SS as string[]).reduce((sum, s) => sum + Buffer.byteLength(s, 'utf8'), 0);
  if ('NS' in value) return (value.NS as string[]).reduce((sum, n) => sum + attributeValueSize({ N: n }), 0);
  return 0;
}

export function itemSize(item: Record<string, Record<string, any>>): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name, 'utf8') + attributeValueSize(value), 0);
}

/**
 * The floor of one list page: the read units of its `pageSize` items alone (a Query is billed on
 * the total size of the items it reads, rounded up to 4 KB; half for an eventually consistent
 * read), from the items the call's Query answered on the wire.
 */
export function pageReadUnits(calls: readonly WireCall[], pageSize: number, consistent: boolean): number {
  const items = calls.filter((call) => call.target === 'Query').flatMap((call) => (call.response.Items as Record<string, any>[] | undefined) ?? []);
  const bytes = items.slice(0, pageSize).reduce((sum, item) => sum + itemSize(item), 0);
  const units = Math.max(1, Math.ceil(bytes / 4096));
  return consistent ? units : units / 2;
}
