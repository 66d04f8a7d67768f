import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { coveringCandidates, countedApart } from '../../../scripts/bench/peak.ts';
import { startCountingProxy, type WireCall } from '../../../scripts/bench/proxy.ts';
import { mostTouched, predictedShare, touchedItems } from '../../../scripts/bench/touched-items.ts';
import { addSummaries, emptySummary, summarizeCalls } from '../../../scripts/bench/wire-summary.ts';

/** The parts of `npm run bench` section 6 (scripts/bench/peak.ts) that need no database. */
describe('bench peak: the warm-up', () => {
  it('chooses, in order, each candidate that reaches a shard no earlier choice reached, until all are reached', () => {
    const shards = [['a'], ['a'], ['b', 'a'], ['c'], ['b'], ['d']];
    expect(coveringCandidates(new Set(['a', 'b', 'c']), (candidate) => shards[candidate]!)).toEqual([0, 2, 3]);
    expect(coveringCandidates(new Set(), () => ['a'])).toEqual([]);
  });

  it('stops with an error when the candidates never reach a shard', () => {
    expect(() => coveringCandidates(new Set(['x']), () => ['a'], 50)).toThrow(/1 shards unreached after 50 candidates/);
  });
});

describe('bench peak: the predicted share of the most-touched item', () => {
  it('is the fullest of 64 shards for one hash, higher for the fullest of two groups of 64', () => {
    const one = predictedShare(400, 64, 1, 500);
    const two = predictedShare(400, 64, 2, 500);
    expect(one).toBeGreaterThan(1 / 64);
    expect(one).toBeLessThan(0.05);
    expect(two).toBeGreaterThan(one);
    expect(two).toBeLessThan(0.05);
    // Seeded: the same figure every time.
    expect(predictedShare(400, 64, 1, 500)).toBe(one);
  });

  it('tends to 1/64 for many redemptions, and is every redemption for one shard', () => {
    // The fullest of 64 bins of 1,000 on average: about 2.4 standard deviations (√1000) over.
    expect(predictedShare(64_000, 64, 1, 20)).toBeLessThan(1.1 / 64);
    expect(predictedShare(10, 1, 1, 10)).toBe(1);
  });
});

describe('bench peak: items counted apart from the spread', () => {
  it('are the generator, the pools and the code item named, never a shard', () => {
    expect(countedApart('codeGenerators 4242|7')).toBe(true);
    expect(countedApart('promotionShards 4242#7#pool')).toBe(true);
    expect(countedApart('codeShards 4242#FLYER#pool')).toBe(true);
    expect(countedApart('codes 4242#FLYER', ['codes 4242#FLYER'])).toBe(true);
    expect(countedApart('codes 4242#OTHER', ['codes 4242#FLYER'])).toBe(false);
    expect(countedApart('promotionShards 4242#7#12')).toBe(false);
  });
});

const table = (envVar: string, fallback: string) => process.env[envVar] ?? fallback;
const shards = () => table('PROMOTION_SHARDS_TABLE', 'promotionShards');
const generators = () => table('CODE_GENERATORS_TABLE', 'codeGenerators');

const written = (shard: number, extra: Record<string, unknown>[] = [], token?: string, more: Partial<WireCall> = {}): WireCall => ({
  target: 'TransactWriteItems',
  status: 200,
  capacityUnits: 8,
  request: {
    ...(token ? { ClientRequestToken: token } : {}),
    TransactItems: [{ Update: { TableName: shards(), Key: { shard_key: { S: `4242#7#${shard}` } } } }, ...extra],
  },
  response: { ConsumedCapacity: [{ TableName: shards(), CapacityUnits: 8, GlobalSecondaryIndexes: { by_redeemed: { CapacityUnits: 2 } } }] },
  ...more,
});
const cancelled = (reasons: string[], token?: string, more: Partial<WireCall> = {}): WireCall => ({
  target: 'TransactWriteItems',
  status: 400,
  capacityUnits: 0,
  request: { ...(token ? { ClientRequestToken: token } : {}), TransactItems: [] },
  response: { __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', CancellationReasons: reasons.map((Code) => ({ Code })) },
  ...more,
});
const read = (table_: string, units: number): WireCall => ({
  target: 'BatchGetItem',
  status: 200,
  capacityUnits: units,
  request: { TableName: table_ },
  response: {},
});

describe('bench peak: what crossed the wire', () => {
  it("names a transaction's items by table id and key, and finds the most-touched", () => {
    const check = { ConditionCheck: { TableName: generators(), Key: { account_id: { N: '4242' }, id: { N: '7' } } } };
    const items = touchedItems(written(3, [check]));
    expect(items).toEqual(['promotionShards 4242#7#3', 'codeGenerators 4242|7']);
    expect(mostTouched([items, touchedItems(written(3)), touchedItems(written(4))])).toEqual({ item: 'promotionShards 4242#7#3', count: 2 });
  });

  it('counts requests, conflicts and conditions apart, and leaves the aside tables out', () => {
    const calls = [
      read('codes', 1),
      read('apiKeys', 0.5),
      cancelled(['None', 'TransactionConflict']),
      cancelled(['ConditionalCheckFailed', 'None']),
      written(1),
      written(2),
    ];
    const summary = summarizeCalls(calls, ['apiKeys']);
    expect(summary.requests).toBe(5);
    expect(summary.byTarget).toEqual({ BatchGetItem: 1, TransactWriteItems: 4 });
    expect(summary.conflicts).toBe(1);
    expect(summary.conditionFailures).toBe(1);
    expect(summary.readUnits).toBe(1);
    expect(summary.writeUnits).toBe(16);
    expect(summary.indexUnits).toBe(4);
    expect(summary.transactions).toHaveLength(2);
    expect(summary.refused).toEqual({
      'TransactWriteItems TransactionCanceledException [None, TransactionConflict]': 1,
      'TransactWriteItems TransactionCanceledException [ConditionalCheckFailed, None]': 1,
    });
  });

  it("counts a transaction carried out after its client's time-out once: its re-send is neither a condition failure nor a second transaction", () => {
    const calls = [
      written(1, [], 'token-1', { abandoned: true, ms: 2500 }),
      cancelled(['ConditionalCheckFailed'], 'token-1'), // the SDK's re-send met what the first attempt wrote
      written(2, [], 'token-2', { abandoned: true, ms: 2100 }),
      written(2, [], 'token-2', { abandoned: true, ms: 2050 }), // the same transaction again, timed out again
      written(2, [], 'token-2'), // and again
      cancelled(['TransactionConflict'], 'token-3', { abandoned: true }), // a token whose calls all failed: each counts
      cancelled(['ConditionalCheckFailed', 'None'], 'token-3'),
    ];
    const summary = summarizeCalls(calls, []);
    expect(summary.requests).toBe(7);
    expect(summary.abandoned).toBe(4);
    expect(summary.resent).toBe(3); // token-2's two re-sends and token-3's (token-1's stand-in re-send has other items)
    expect(summary.conflicts).toBe(1);
    expect(summary.conditionFailures).toBe(1);
    expect(summary.transactions).toHaveLength(2);
    expect(summary.writeUnits).toBe(16); // each transaction once
    expect(summary.indexUnits).toBe(4);
  });

  it("counts the SDK's re-sends by their bodies: the same transaction token, the same read", () => {
    const attempt = written(1, [], 'token-1', { abandoned: true });
    const again = { ...written(1, [], 'token-1'), request: structuredClone(attempt.request) };
    const summary = summarizeCalls([read('codes', 1), read('codes', 1), attempt, again, written(1, [], 'token-2')], []);
    expect(summary.requests).toBe(5);
    expect(summary.resent).toBe(2);
  });

  it('adds the summaries of rounds', () => {
    const a = summarizeCalls([read('codes', 1), written(1)], []);
    const b = summarizeCalls([read('codes', 1), cancelled(['TransactionConflict']), written(2)], []);
    const sum = addSummaries(addSummaries(emptySummary, a), b);
    expect(sum.requests).toBe(5);
    expect(sum.byTarget).toEqual({ BatchGetItem: 2, TransactWriteItems: 3 });
    expect(sum.conflicts).toBe(1);
    expect(sum.transactions).toHaveLength(2);
    expect(sum.readUnits).toBe(2);
  });
});

describe('bench peak: the counting proxy', () => {
  let upstream: Server;
  let port = 0;
  beforeAll(async () => {
    // A stand-in for DynamoDB that answers after 150 ms.
    upstream = createServer((incoming, outgoing) => {
      incoming.resume();
      incoming.on('end', () => setTimeout(() => outgoing.end(JSON.stringify({ ConsumedCapacity: { CapacityUnits: 1 } })), 150));
    });
    await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
    port = (upstream.address() as { port: number }).port;
  });
  afterAll(async () => {
    upstream.closeAllConnections();
    await new Promise((done) => upstream.close(done));
  });

  const send = (endpoint: string, timeoutMs?: number) =>
    new Promise<void>((done) => {
      const sent = request(`${endpoint}/`, { method: 'POST', headers: { 'x-amz-target': 'DynamoDB_20120810.GetItem' } }, (answer) => {
        answer.resume();
        answer.on('end', done);
      });
      if (timeoutMs !== undefined) sent.setTimeout(timeoutMs, () => sent.destroy());
      sent.on('error', () => done());
      sent.end('{"TableName":"t"}');
    });

  it("times each call and marks one whose client gave up before DynamoDB's answer", async () => {
    const proxy = await startCountingProxy(`http://127.0.0.1:${port}`);
    const calls: WireCall[] = [];
    try {
      await send(proxy.endpoint);
      await send(proxy.endpoint, 20);
      await vi.waitFor(
        () => {
          calls.push(...proxy.take());
          expect(calls).toHaveLength(2);
        },
        { timeout: 2000 },
      );
      expect(calls[0]).toMatchObject({ target: 'GetItem', status: 200, capacityUnits: 1, abandoned: false });
      expect(calls[0]!.ms).toBeGreaterThanOrEqual(100);
      expect(calls[1]).toMatchObject({ target: 'GetItem', abandoned: true });
    } finally {
      await proxy.close();
    }
  });
});
