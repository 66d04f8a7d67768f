import { describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { buildPlan, toDocument, type Recording } from '../../../scripts/bench/plan.ts';
import { itemSize, pageReadUnits } from '../../../scripts/bench/capacity.ts';
import { unitsOf, warmPair } from '../../../scripts/bench/dynamodb-requests.ts';
import { replayer, httpInput } from '../../../scripts/bench/replay.ts';
import { formatNumber, formatTable, median, middle, percentile, reportJson, row } from '../../../scripts/bench/report.ts';
import { checkCoverage, label, routesWithoutScenario, scenarios, scenariosWithoutRoute } from '../../../scripts/bench/scenarios.ts';

/** The parts of `npm run bench` that need no database and no clock: nothing here is timed. */
describe('bench scenarios', () => {
  it('cover every route of the route table', () => {
    expect(routesWithoutScenario()).toEqual([]);
    expect(scenariosWithoutRoute()).toEqual([]);
    expect(() => checkCoverage()).not.toThrow();
  });

  it('name the route that has none, and the scenario whose route is gone', () => {
    const ids = [...routes.map((r) => r.operationId), 'archiveEvents'];
    expect(routesWithoutScenario(ids)).toEqual(['archiveEvents']);
    expect(scenariosWithoutRoute(['getEvent'], scenarios).sort()).toEqual(
      routes
        .map((r) => r.operationId)
        .filter((id) => id !== 'getEvent')
        .sort(),
    );
  });

  it('declare a capacity floor each, and a transaction target for the issuances of 100 and 1000 codes', () => {
    for (const scenario of scenarios) expect(scenario.floor.how, label(scenario)).not.toBe('');
    expect(scenarios.filter((s) => s.transactionTarget).map(label)).toEqual(['issueCodes (count 100)', 'issueCodes (count 1000)']);
  });

  it('have distinct labels', () => {
    const labels = scenarios.map(label);
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe('bench table and JSON', () => {
  const rows = [row('cold start: getEvent', 'ms', 210, 200, '≤ 1.05 ×'), row('DynamoDB requests: getEvent (existing)', 'req/call', 1, null, '1')];

  it('computes the ratio only when both figures are there', () => {
    expect(rows[0]!.ratio).toBeCloseTo(1.05, 10);
    expect(rows[1]!.ratio).toBeNull();
    expect(row('x', 'µs', 5, 0, '').ratio).toBeNull();
  });

  it('prints one aligned line per row under the six column names', () => {
    const lines = formatTable(rows).split('\n');
    expect(lines[0]).toMatch(/^metric\s+unit\s+tillgate\s+baseline\s+ratio\s+target$/);
    expect(lines[1]).toMatch(/^-+ +-+ +-+ +-+ +-+ +-+$/);
    expect(lines[2]).toMatch(/^cold start: getEvent\s+ms\s+210\s+200\s+1\.05\s+≤ 1\.05 ×$/);
    expect(lines[3]).toMatch(/^DynamoDB requests: getEvent \(existing\)\s+req\/call\s+1\s+–\s+–\s+1$/);
    expect(new Set(lines.slice(2).map((line) => line.indexOf(line.match(/(ms|req\/call) /)![0])))).toHaveProperty('size', 1);
  });

  it('rounds to three significant digits', () => {
    expect([formatNumber(1234.5), formatNumber(56.78), formatNumber(3.14259), formatNumber(0.01234), formatNumber(null), formatNumber(7)]).toEqual([
      '1235',
      '56.8',
      '3.14',
      '0.012',
      '–',
      '7',
    ]);
  });

  it('writes the JSON shape of reports/bench.json', () => {
    const json = JSON.parse(JSON.stringify(reportJson(rows, new Date('2025-01-02T03:04:05Z'), 'test machine')));
    expect(json).toEqual({
      date: '2025-01-02T03:04:05.000Z',
      machine: 'test machine',
      rows: [
        { metric: 'cold start: getEvent', unit: 'ms', tillgate: 210, baseline: 200, ratio: 1.05, target: '≤ 1.05 ×' },
        { metric: 'DynamoDB requests: getEvent (existing)', unit: 'req/call', tillgate: 1, baseline: null, ratio: null, target: '1' },
      ],
    });
  });

  it('takes nearest-rank percentiles, and the middle of an even number of values', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(middle([5, 1, 3])).toBe(3);
    expect(middle([4, 1, 3, 2])).toBe(2.5);
    expect(middle([])).toBeNaN();
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
  });
});

describe('bench replay plans', () => {
  // Two recordings of a void-like request: a read keyed by the request, a counter, a transaction.
  const recording = (pos: string, id: number, at: number): Recording => ({
    input: httpInput('/v2.0/voided_transactions', {}, { 'X-Auth-Token': 'same' }, JSON.stringify({ transaction: { pos_transaction_id: pos } })),
    at,
    answer: { statusCode: 200, headers: {}, body: '{}' },
    calls: [
      { target: 'GetItem', status: 200, capacityUnits: 1, request: { TableName: 'v', Key: { k: { S: `[1,"${pos}"]` } } }, response: {} },
      {
        target: 'UpdateItem',
        status: 200,
        capacityUnits: 1,
        request: { TableName: 'c', Key: { name: { S: 'ids' } }, UpdateExpression: 'ADD #e :one', ExpressionAttributeValues: { ':one': { N: '1' } } },
        response: { Attributes: { event: { N: String(id) } } },
      },
      {
        target: 'TransactWriteItems',
        status: 200,
        capacityUnits: 4,
        request: {
          ClientRequestToken: `token-${pos}`,
          TransactItems: [{ Put: { TableName: 'e', Item: { id: { N: String(id) }, expires_at: { N: String(Math.floor(at / 1000) + 86_400) } } } }],
        },
        response: {},
      },
    ],
  });

  it('turns wire attribute values into document values', () => {
    expect(toDocument({ Key: { id: { N: '7' }, tags: { L: [{ S: 'a' }, { BOOL: true }] } } })).toEqual({ Key: { id: 7, tags: ['a', true] } });
  });

  it('fills what differed between two recordings from the request and from earlier answers', async () => {
    const plan = buildPlan('voidTransaction', 'new', recording('P-1', 100, 1_700_000_000_000), recording('P-2', 101, 1_700_000_001_000));
    expect(plan.steps.map((step) => step.command)).toEqual(['GetCommand', 'UpdateCommand', 'TransactWriteCommand']);
    expect(plan.steps[2]!.input).not.toHaveProperty('ClientRequestToken');

    const sent: { name: string; input: any }[] = [];
    class Command {
      constructor(readonly input: unknown) {}
    }
    const commands = Object.fromEntries(['GetCommand', 'UpdateCommand', 'TransactWriteCommand'].map((name) => [name, class extends Command {}]));
    const replay = replayer(plan, commands, async (command: any) => {
      const name = Object.entries(commands).find(([, type]) => command instanceof type)![0];
      sent.push({ name, input: command.input });
      return name === 'UpdateCommand' ? { Attributes: { event: 555 } } : {};
    });
    await replay(httpInput('/v2.0/voided_transactions', {}, { 'X-Auth-Token': 'same' }, JSON.stringify({ transaction: { pos_transaction_id: 'P-9' } })));

    expect(sent[0]!.input.Key).toEqual({ k: '[1,"P-9"]' });
    expect(sent[1]!.input.ExpressionAttributeValues).toEqual({ ':one': 1 });
    const item = sent[2]!.input.TransactItems[0].Put.Item;
    expect(item.id).toBe(555);
    expect(item.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(86_000);
  });

  it('gives a number nothing explains one fresh value per replayed call, the same wherever the call uses it', async () => {
    // An issuance id on a pending code, then in its finalisation's condition: the same id in one
    // call (a fresh one each time would fail the condition), another in the next call.
    const plan = {
      operationId: 'issueCodes',
      variant: 'pending',
      answer: { statusCode: 201, headers: {}, body: '' },
      steps: [
        {
          command: 'PutCommand',
          target: 'PutItem',
          input: { Item: { issuance_id: 101 } },
          holes: [{ at: ['Item', 'issuance_id'], fill: { from: 'unique-number', base: 101 } }],
          output: {},
        },
        {
          command: 'UpdateCommand',
          target: 'UpdateItem',
          input: { ExpressionAttributeValues: { ':issuance': 101, ':other': 7 } },
          holes: [
            { at: ['ExpressionAttributeValues', ':issuance'], fill: { from: 'unique-number', base: 101 } },
            { at: ['ExpressionAttributeValues', ':other'], fill: { from: 'unique-number', base: 7 } },
          ],
          output: {},
        },
      ],
    } as unknown as Parameters<typeof replayer>[0];
    const sent: any[] = [];
    class Command {
      constructor(readonly input: unknown) {}
    }
    const replay = replayer(plan, { PutCommand: class extends Command {}, UpdateCommand: class extends Command {} }, async (command: any) => {
      sent.push(command.input);
      return {};
    });
    const input = httpInput('/v1.0/codegen/1/codes', {}, {}, null);
    await replay(input);
    await replay(input);
    const [put1, update1, put2, update2] = sent;
    expect(update1.ExpressionAttributeValues[':issuance']).toBe(put1.Item.issuance_id);
    expect(update2.ExpressionAttributeValues[':issuance']).toBe(put2.Item.issuance_id);
    expect(put2.Item.issuance_id).not.toBe(put1.Item.issuance_id);
    expect(update1.ExpressionAttributeValues[':other']).not.toBe(put1.Item.issuance_id);
  });

  it('takes two recordings whose side-by-side calls reached DynamoDB in another order, and follows the first', () => {
    const first = recording('P-1', 100, 0);
    const second = recording('P-2', 101, 0);
    const swapped = { ...second, calls: [second.calls[1]!, second.calls[0]!, second.calls[2]!] };
    const plan = buildPlan('voidTransaction', 'new', first, swapped);
    expect(plan.steps.map((step) => step.command)).toEqual(['GetCommand', 'UpdateCommand', 'TransactWriteCommand']);
    expect(plan.steps[0]!.holes.map((hole) => hole.at)).toEqual([['Key', 'k']]);
  });

  it('refuses two recordings that made different calls', () => {
    const a = recording('P-1', 100, 0);
    const b = { ...recording('P-2', 101, 0), calls: recording('P-2', 101, 0).calls.slice(0, 1) };
    expect(() => buildPlan('voidTransaction', 'new', a, b)).toThrow(/made different calls/);
  });
});

describe('bench id blocks and capacity', () => {
  const call = (target: string, table: string, capacityUnits = 1) => ({ target, status: 200, capacityUnits, request: { TableName: table }, response: {} });
  const rec = (...calls: ReturnType<typeof call>[]): Recording => ({
    input: httpInput('/x', {}, {}, null),
    at: 0,
    answer: { statusCode: 200, headers: {}, body: '' },
    calls,
  });

  it('builds warm plans from two calls that reserved no id block', () => {
    const withBlock = rec(call('UpdateItem', 'counters'), call('TransactWriteItems', 'v'));
    const warm = rec(call('TransactWriteItems', 'v'));
    const [a, b] = warmPair([warm, withBlock, warm, warm], 'counters');
    expect([a, b]).toEqual([warm, warm]);
    expect(() => warmPair([warm, withBlock, warm], 'counters')).toThrow(/id block/);
    // An UpdateItem on another table is work, not a reservation.
    const update = rec(call('UpdateItem', 'generators'));
    expect(warmPair([update, update], 'counters')).toEqual([update, update]);
  });

  it('counts a transaction at 2 WCU per item per started KB when DynamoDB Local reports less', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ Put: { TableName: 'codes', Item: { code_key: { S: `4242#7#WIN-${i}` } } } }));
    expect(unitsOf({ target: 'TransactWriteItems', status: 200, capacityUnits: 2, request: { TransactItems: items }, response: {} })).toBe(200);
    expect(unitsOf({ target: 'GetItem', status: 200, capacityUnits: 0.5, request: {}, response: {} })).toBe(0.5);
  });

  it("sizes items by DynamoDB's rules and floors a page at ceil(bytes / 4 KB)", () => {
    expect(itemSize({ ab: { S: 'xyz' }, n: { N: '12345' }, ok: { BOOL: true } })).toBe(2 + 3 + 1 + 4 + 2 + 1);
    const item = { payload: { S: 'x'.repeat(93) } }; // 100 bytes
    const query = { target: 'Query', status: 200, capacityUnits: 3, request: {}, response: { Items: Array.from({ length: 101 }, () => item) } };
    expect(pageReadUnits([query], 100, true)).toBe(3); // 10,000 bytes of the page's 100 items
    expect(pageReadUnits([query], 100, false)).toBe(1.5);
  });
});
