import { tables, type TableId } from '../../functions/tables.ts';
import type { WireCall } from './proxy.ts';

/**
 * The items a TransactWriteItems writes or condition-checks, as `table key` strings: what
 * DynamoDB's transaction conflicts are about (a ConditionCheck takes part as a write does). The
 * tables are named by their id (functions/tables.ts), found through the environment variables
 * the functions read.
 */
export function touchedItems(call: WireCall): string[] {
  if (call.target !== 'TransactWriteItems') return [];
  const ids = new Map<string, TableId>();
  for (const [id, spec] of Object.entries(tables) as [TableId, (typeof tables)[TableId]][]) {
    const name = process.env[spec.envVar];
    if (name) ids.set(name, id);
  }
  const items = (call.request.TransactItems ?? []) as Record<string, { TableName: string; Key?: Record<string, unknown>; Item?: Record<string, unknown> }>[];
  return items.map((entry) => {
    const action = Object.values(entry)[0]!;
    const id = ids.get(action.TableName) ?? action.TableName;
    const spec = tables[id as TableId];
    const record = action.Key ?? action.Item ?? {};
    const keyNames = spec ? [spec.partitionKey.name, ...('sortKey' in spec && spec.sortKey ? [spec.sortKey.name] : [])] : Object.keys(record);
    const key = keyNames.map((name) => Object.values((record[name] ?? {}) as Record<string, unknown>)[0]).join('|');
    return `${id} ${key}`;
  });
}

/** Of these transactions, the item that takes part in the most, and in how many. */
export function mostTouched(transactions: readonly string[][]): { item: string; count: number } {
  const counts = new Map<string, number>();
  for (const items of transactions) for (const item of new Set(items)) counts.set(item, (counts.get(item) ?? 0) + 1);
  let best = { item: '', count: 0 };
  for (const [item, count] of counts) if (count > best.count) best = { item, count };
  return best;
}

/**
 * The share of `balls` redemptions that the fullest item is expected to take part in, when each
 * redemption picks one item in each of `groups` groups of `bins` items, by independent hashes
 * (simulated, seeded): one group of 64 for a promotion's shards; two (a promotion shard and a
 * code shard, 128 items) for a multi-use code's redemption.
 */
export function predictedShare(balls: number, bins: number, groups = 1, trials = 2000): number {
  if (balls === 0) return Number.NaN;
  let sum = 0;
  // mulberry32, seeded: integer arithmetic throughout (an LCG's product in doubles loses bits).
  let state = 42;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  for (let trial = 0; trial < trials; trial++) {
    let fullest = 0;
    for (let group = 0; group < groups; group++) {
      const counts = new Array<number>(bins).fill(0);
      for (let ball = 0; ball < balls; ball++) counts[Math.floor(random() * bins)]!++;
      fullest = Math.max(fullest, ...counts);
    }
    sum += fullest;
  }
  return sum / trials / balls;
}
