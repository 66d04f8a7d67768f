import { unitsOf } from './dynamodb-requests.ts';
import { isRead, type WireCall } from './proxy.ts';
import { touchedItems } from './touched-items.ts';

/** What crossed the wire for a run of redemptions, as the counting proxy saw it (section 6). */
export interface WireSummary {
  /** Requests, those on the aside tables (token lookups, id blocks) left out. */
  readonly requests: number;
  /** The same, by operation. */
  readonly byTarget: Readonly<Record<string, number>>;
  /** Transactions (writes or snapshots) cancelled by a conflict with another one, then tried again. */
  readonly conflicts: number;
  /** TransactWriteItems cancelled by a failed condition (a shard to create, a grant spent, a code taken), then written otherwise; the SDK's re-sends after a time-out left out. */
  readonly conditionFailures: number;
  /**
   * Capacity units as DynamoDB Local reported them (transactions at least 2 WCU per item:
   * unitsOf), reads and writes. A transaction that DynamoDB carried out after its client had gone
   * (the SDK's time-out of an attempt) is counted once: its re-send, the same ClientRequestToken,
   * is left out.
   */
  readonly readUnits: number;
  readonly writeUnits: number;
  /** Of those units, what DynamoDB Local reported for the upkeep of global secondary indexes. */
  readonly indexUnits: number;
  /** The items each successful TransactWriteItems wrote or condition-checked (touched-items.ts), once per ClientRequestToken. */
  readonly transactions: readonly string[][];
  /** DynamoDB's answers other than 200, by operation, error and cancellation reasons. */
  readonly refused: Readonly<Record<string, number>>;
  /**
   * Calls the SDK sent again after the time-out of an attempt (2 s: DYNAMODB_REQUEST_TIMEOUT_MS):
   * the same body as an earlier call (a transaction's carries its ClientRequestToken; a
   * redemption's read names its new POS transaction). `abandoned`: the calls the proxy saw
   * answered after their client had gone (it cannot see a close that comes after the answer).
   */
  readonly resent: number;
  readonly abandoned: number;
}

export const emptySummary: WireSummary = {
  requests: 0,
  byTarget: {},
  conflicts: 0,
  conditionFailures: 0,
  readUnits: 0,
  writeUnits: 0,
  indexUnits: 0,
  transactions: [],
  refused: {},
  resent: 0,
  abandoned: 0,
};

const merged = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) => {
  const sum: Record<string, number> = { ...a };
  for (const [key, count] of Object.entries(b)) sum[key] = (sum[key] ?? 0) + count;
  return sum;
};

type Consumed = { CapacityUnits?: number; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };

/** The GSI part of a call's ConsumedCapacity (one object, or one per table for batches and transactions). */
function indexUnitsOf(call: WireCall): number {
  const consumed = call.response.ConsumedCapacity as Consumed | Consumed[] | undefined;
  if (!consumed) return 0;
  return (Array.isArray(consumed) ? consumed : [consumed])
    .flatMap((table) => Object.values(table.GlobalSecondaryIndexes ?? {}))
    .reduce((sum, index) => sum + (index.CapacityUnits ?? 0), 0);
}

/** Why a transaction was cancelled: the codes of its cancellation reasons ('None' for an item that was fine). */
function cancellationCodes(call: WireCall): string[] {
  const reasons = (call.response.CancellationReasons as { Code?: string }[] | undefined) ?? [];
  return reasons.map((reason) => reason.Code ?? 'None');
}

export function summarizeCalls(calls: readonly WireCall[], asideTables: readonly string[]): WireSummary {
  const own = calls.filter((call) => !asideTables.includes(call.request.TableName as string));
  const byTarget: Record<string, number> = {};
  for (const call of own) byTarget[call.target] = (byTarget[call.target] ?? 0) + 1;
  // A transaction's attempts share its ClientRequestToken. When DynamoDB carried out an attempt
  // whose client had gone (the SDK's time-out), the SDK's re-send is the same transaction again
  // (DynamoDB answers it from the token) or fails its conditions on what the first one wrote (a
  // shard created, a code held): it is left out of the capacity, the conditions and the items.
  // Of a token's calls, when one succeeded, that one counts alone.
  const tokenOf = (call: WireCall) => call.request.ClientRequestToken as string | undefined;
  const done = new Map<string, WireCall>();
  for (const call of own) if (call.status === 200 && tokenOf(call) !== undefined && !done.has(tokenOf(call)!)) done.set(tokenOf(call)!, call);
  const counted = own.filter((call) => tokenOf(call) === undefined || !done.has(tokenOf(call)!) || done.get(tokenOf(call)!) === call);
  const cancelled = counted.filter((call) => call.status !== 200 && call.target.startsWith('Transact'));
  const conditionFailures = cancelled.filter((call) => cancellationCodes(call).includes('ConditionalCheckFailed')).length;
  const conflicts = cancelled.filter(
    (call) => !cancellationCodes(call).includes('ConditionalCheckFailed') && JSON.stringify(call.response).includes('TransactionConflict'),
  ).length;
  const bodies = new Set<string>();
  let resent = 0;
  for (const call of own) {
    const body = JSON.stringify(call.request);
    if (bodies.has(body)) resent++;
    else bodies.add(body);
  }
  const refused: Record<string, number> = {};
  for (const call of own.filter((c) => c.status !== 200)) {
    const type = String(call.response.__type ?? call.status)
      .split('#')
      .pop();
    const reasons = cancellationCodes(call);
    const key = `${call.target} ${type}${reasons.length > 0 ? ` [${[...new Set(reasons)].join(', ')}]` : ''}`;
    refused[key] = (refused[key] ?? 0) + 1;
  }
  const units = (read: boolean) => counted.filter((call) => isRead(call.target) === read).reduce((sum, call) => sum + unitsOf(call), 0);
  return {
    requests: own.length,
    byTarget,
    conflicts,
    conditionFailures,
    readUnits: units(true),
    writeUnits: units(false),
    indexUnits: counted.reduce((sum, call) => sum + indexUnitsOf(call), 0),
    transactions: counted.filter((call) => call.target === 'TransactWriteItems' && call.status === 200).map(touchedItems),
    refused,
    resent,
    abandoned: own.filter((call) => call.abandoned === true).length,
  };
}

export function addSummaries(a: WireSummary, b: WireSummary): WireSummary {
  return {
    requests: a.requests + b.requests,
    byTarget: merged(a.byTarget, b.byTarget),
    conflicts: a.conflicts + b.conflicts,
    conditionFailures: a.conditionFailures + b.conditionFailures,
    readUnits: a.readUnits + b.readUnits,
    writeUnits: a.writeUnits + b.writeUnits,
    indexUnits: a.indexUnits + b.indexUnits,
    transactions: [...a.transactions, ...b.transactions],
    refused: merged(a.refused, b.refused),
    resent: a.resent + b.resent,
    abandoned: a.abandoned + b.abandoned,
  };
}
