import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { numberFromEnv, tableName } from '#runtime/config';

const TABLE = tableName('counters');

/**
 * No guessing codes (PRODUCT.md, "Accounts and tokens"): the codes a token names that are not
 * found, in redemptions and checks together, each once per request, are limited to `limit` in
 * any window of `windowSeconds` (120 in any minute by default).
 *
 * A sliding window in SLOTS slots (one second each for a minute): one counter item per token and
 * window-long stretch of time, `s0` … `s59` the unknown codes counted in each of its slots, with a
 * TTL. Only a request that names an unknown code touches it: one UpdateItem that ADDs its count to
 * the current slot and returns the stretch's slots, and, beside it, one consistent GetItem of the
 * stretch before; the count is every slot of the last window, the current one included. Normal
 * traffic (every code found) pays nothing. ADD is atomic: racing requests each see the others'
 * codes that committed before theirs, so none is lost and none escapes the count.
 *
 * Precision: a slot counts from its start to a whole window after its end, so a code counts for
 * between one window and one window and one slot (60 to 61 s): no window of `windowSeconds` ever
 * holds more than `limit` served unknown codes, and a refusal lasts at most one slot longer than
 * an exact window would make it. The codes of a refused request count too: a till that keeps
 * sending unknown codes stays refused; one that stops is served again once its last window has
 * passed (Retry-After says when).
 */
export const UNKNOWN_CODE_LIMIT = Math.max(1, Math.floor(numberFromEnv('UNKNOWN_CODE_LIMIT', 120)));
/** The window, in seconds: 60 in AWS (the contract's minute); shorter only for tests. */
export const UNKNOWN_CODE_WINDOW_SECONDS = Math.max(1, numberFromEnv('UNKNOWN_CODE_WINDOW_SECONDS', 60));
const SLOTS = 60;

export interface GuessLimit {
  readonly limit: number;
  readonly windowSeconds: number;
}

export type UnknownCodesVerdict =
  | { readonly allowed: true; readonly counted: number }
  | { readonly allowed: false; readonly counted: number; readonly retryAfterSeconds: number };

const itemName = (keyId: string, windowSeconds: number, stretch: number) => `unknown-codes#${keyId}#${windowSeconds}#${stretch}`;

/**
 * Counts `unknown` codes not found for the token `keyId` now, and says whether the request may be
 * answered (its codes included, the window holds at most the limit) or must be refused, and for
 * how long. `now` and `settings` are for the tests.
 */
export async function countUnknownCodes(
  keyId: string,
  unknown: number,
  now = Date.now(),
  { limit, windowSeconds }: GuessLimit = { limit: UNKNOWN_CODE_LIMIT, windowSeconds: UNKNOWN_CODE_WINDOW_SECONDS },
): Promise<UnknownCodesVerdict> {
  const slotMs = (windowSeconds * 1000) / SLOTS;
  const slot = Math.floor(now / slotMs);
  const stretch = Math.floor(slot / SLOTS);
  const [updated, before] = await Promise.all([
    documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { name: itemName(keyId, windowSeconds, stretch) },
        UpdateExpression: 'ADD #slot :unknown SET expires_at = if_not_exists(expires_at, :expires)',
        ExpressionAttributeNames: { '#slot': `s${slot % SLOTS}` },
        // Kept two stretches more than it counts, and an hour for DynamoDB's lazy TTL to be no worry.
        ExpressionAttributeValues: { ':unknown': unknown, ':expires': Math.ceil(((stretch + 3) * SLOTS * slotMs) / 1000) + 3600 },
        ReturnValues: 'ALL_NEW',
      }),
    ),
    documents.send(new GetCommand({ TableName: TABLE, Key: { name: itemName(keyId, windowSeconds, stretch - 1) }, ConsistentRead: true })),
  ]);
  // The slots of the last window, the current one and the one a whole window before it included.
  const counts = [...slotsOf(updated.Attributes, stretch), ...slotsOf(before.Item, stretch - 1)]
    .filter(([at]) => at >= slot - SLOTS && at <= slot)
    .sort(([a], [b]) => a - b);
  const counted = counts.reduce((sum, [, n]) => sum + n, 0);
  if (counted <= limit) return { allowed: true, counted };
  // Served again once the oldest slots have left the window, enough of them for one more unknown code.
  let left = counted;
  let until = now;
  for (const [at, n] of counts) {
    left -= n;
    until = (at + SLOTS + 1) * slotMs;
    if (left <= limit - 1) break;
  }
  return { allowed: false, counted, retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)) };
}

function slotsOf(item: Record<string, unknown> | undefined, stretch: number): [number, number][] {
  if (!item) return [];
  return Object.entries(item).flatMap(([name, value]) => {
    const match = /^s(\d+)$/.exec(name);
    return match ? [[stretch * SLOTS + Number(match[1]), Number(value)] as [number, number]] : [];
  });
}
