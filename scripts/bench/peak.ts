import { PROMOTION_SHARDS as SHARD_COUNT } from '../../functions/tables.ts';
import type { CountingProxy } from './proxy.ts';
import { middle, row, type Row } from './report.ts';
import type { BenchContext } from './scenarios.ts';
import { mostTouched, predictedShare } from './touched-items.ts';
import { addSummaries, emptySummary, summarizeCalls, type WireSummary } from './wire-summary.ts';

/**
 * A promotion at a chain's peak (docs/redemption.md, "One promotion at a chain's peak" and
 * "Counting at a chain's peak"), the rows of `npm run bench` section 6. Four arms of 50
 * concurrent tills, each redemption a new POS transaction with a basket, interleaved round by
 * round (forward, then backward):
 * - `many`, the baseline: distinct single-use codes of 50 promotions (no promotion shared);
 * - `one`: distinct single-use codes of ONE promotion;
 * - `budget`: distinct single-use codes of ONE promotion with a budget (`max_redemptions`);
 * - `code`: ONE multi-use code (`max_redemptions_per_code`), the tills' own transactions.
 * Each arm is warmed up first, not measured: a redemption through every shard its measured
 * redemptions go through (shards are created once in a count's life), so the rounds measure the
 * steady state. Per arm, beside a baseline: redemptions a second (medians of the rounds against
 * `many`'s, and the median of the per-round ratios),
 * the share of its redemptions in which the most-touched item takes part (against the design's
 * prediction), DynamoDB requests per redemption (against the design's 2) and capacity per
 * redemption (against the declared floor), from what the counting proxy saw.
 */
export interface PeakOptions {
  readonly context: BenchContext;
  readonly proxy: CountingProxy;
  readonly tills: number;
  /** Redemptions per arm and round. */
  readonly perRound: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
  /** Tables whose requests are not the redemption's own (the token lookup, id blocks). */
  readonly asideTables: readonly string[];
}

/** A multi-use code's uses and a budget: far from reached in the run, as at a chain's peak. */
const USES = 1_000_000;
const PROMOTIONS = 50;
/** Sends of a warm-up redemption at most. */
const WARM_UP_PASSES = 5;

/** Every term of a promotion (issue 24); each till request sends a basket that meets them. */
const promotion = {
  generation_type: 'tillgate' as const,
  code_length: 10,
  prefix: 'PEAK-',
  store_id: 1,
  description: 'bench: one promotion at its peak',
  discount: { type: 'percent' as const, percent_off: 10, max_amount_off: 500, currency: 'EUR' },
  minimum_basket: { amount: 1000, currency: 'EUR' },
  valid_until: '2099-01-01T00:00:00.000Z',
};
const basket = { total: 2500, currency: 'EUR' };

/**
 * The design's least capacity of a redemption in AWS, index upkeep left out as in the other
 * capacity rows: the code and the transaction read consistently (AWS charges the read of an item
 * not there yet), and each item of the transaction (≤ 1 KB) at 2 WCU. A budget's count and grant
 * are on the promotion shard the redemption writes anyway.
 */
const SINGLE_USE_FLOOR = {
  units: 2 + 4 * 2,
  how: '2 consistent reads (code, transaction) + 4 transactional items × 2 WCU (code, promotion shard, transaction, event) = 10',
};
const MULTI_USE_FLOOR = {
  units: 2 + 5 * 2,
  how: '2 consistent reads (code, transaction) + 5 transactional items × 2 WCU (promotion shard, code shard, holder record, transaction, event) = 12',
};

type Limits = { readonly max_redemptions_per_code?: number; readonly max_redemptions?: number };

interface Sale {
  readonly code: string;
  readonly siteId: string;
  readonly posTransactionId: string;
}
type Till = Omit<Sale, 'code'>;

/** One arm: what its tills redeem, how it is warmed up, and how its figures are read. */
interface Arm {
  readonly name: 'many' | 'one' | 'budget' | 'code';
  /** The measured redemptions, rounds × perRound. */
  readonly sales: readonly Sale[];
  /** Warm-up waves, one after the other (a multi-use code's first use alone: it creates the code's pool). */
  readonly warmUp: readonly (readonly Sale[])[];
  /** Independent hashes that pick a redemption's shards: 1 (a promotion's 64), 2 (a promotion's and a code's: 128 items). */
  readonly hashes: number;
  /** The design's least capacity per redemption, and how it is made up. */
  readonly floor: { readonly units: number; readonly how: string };
}

/** Making state on a busy machine: a 503 of DynamoDB Local (a time-out) is tried again, a few times. */
async function patiently<T extends { status: number }>(what: string, expected: number, send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send();
    if (answer.status === expected) return answer;
    if (answer.status !== 503 || attempt >= 5) throw new Error(`bench peak: could not ${what}: ${answer.status}`);
  }
}

async function createPromotion(context: BenchContext, limits: Limits = {}): Promise<number> {
  const { core } = context.client();
  const body = { code_generator: { ...promotion, ...limits } };
  const created = await patiently('create a promotion', 201, () => core.POST('/v1.0/codegen', { body }));
  return created.data!.code_generator.id;
}

async function issueCodes(context: BenchContext, id: number, count: number): Promise<string[]> {
  const { core } = context.client();
  const codes: string[] = [];
  while (codes.length < count) {
    const body = { count: Math.min(250, count - codes.length) };
    const issued = await patiently('issue codes', 201, () => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body }));
    codes.push(...issued.data!.codes);
  }
  return codes;
}

/**
 * The warm-up's transactions: of the candidates 0, 1, 2, …, each one that reaches a shard of
 * `needed` no earlier chosen candidate reached, until all of them are reached. `shardsOf` names the
 * shards a candidate's redemption goes through (as the functions hash them).
 */
export function coveringCandidates(needed: ReadonlySet<string>, shardsOf: (candidate: number) => readonly string[], most = 100_000): number[] {
  const missing = new Set(needed);
  const chosen: number[] = [];
  for (let candidate = 0; missing.size > 0; candidate++) {
    if (candidate >= most) throw new Error(`bench peak: ${missing.size} shards unreached after ${most} candidates`);
    const shards = shardsOf(candidate);
    if (!shards.some((shard) => missing.has(shard))) continue;
    chosen.push(candidate);
    for (const shard of shards) missing.delete(shard);
  }
  return chosen;
}

/**
 * Items a count touches only where one of its shards is created or refilled, at most a few times
 * in its life (data/counts.ts): the generator (a shard's creation checks it), the pools (`…#pool`)
 * and a multi-use code's own item (its first use). Counted apart from the spread.
 */
export const countedApart = (item: string, ownItems: readonly string[] = []) =>
  item.startsWith('codeGenerators ') || item.endsWith('#pool') || ownItems.includes(item);

/** What a till is told when it is not 200: the status and the pos host's message id (`503 service_unavailable`). */
function failureOf(answer: { status: number; error?: unknown }): string {
  const id = /"message_id":"([^"]+)"/.exec(JSON.stringify(answer.error ?? {}))?.[1];
  return id ? `${answer.status} ${id}` : String(answer.status);
}

const count = (failures: ReadonlyMap<string, number>) => [...failures.values()].reduce((a, b) => a + b, 0);
const listed = (failures: ReadonlyMap<string, number>) => (failures.size === 0 ? 'none' : [...failures].map(([what, n]) => `${n} × ${what}`).join(', '));
const perRedemption = (value: number, redemptions: number) => (redemptions === 0 ? Number.NaN : value / redemptions);

export async function measurePeak(options: PeakOptions): Promise<Row[]> {
  const { context, proxy, tills, perRound, rounds, log } = options;
  const total = perRound * rounds;
  // Loaded only now: the functions' modules read DYNAMODB_ENDPOINT and their tables' names when
  // they load, which the local stack has set by the time the bench gets here.
  const { shardFor } = await import('../../functions/data/counts.ts');
  const { shardOf } = await import('../../functions/data/promotion-shards.ts');
  const { transactionKey } = await import('../../functions/data/pos-transactions.ts');
  const { codeKey } = await import('../../functions/data/codes.ts');
  const keyOf = (till: Till) => transactionKey(context.accountId, till.siteId, till.posTransactionId);
  const run = context.unique();
  const till = (arm: string, i: number): Till => ({ siteId: `peak-${i % 97}`, posTransactionId: `peak-${run}-${arm}-${i}` });
  const withCodes = (slots: readonly Till[], codes: readonly string[]): Sale[] => slots.map((slot, i) => ({ ...slot, code: codes[i]! }));

  log(`  peak: making the arms' promotions and codes (${total} measured redemptions per arm) …`);
  /** Measured tills of one promotion's single-use codes and the warm-up's: one through every shard they reach. */
  const singleUse = (arm: string, generatorId: number, measured: readonly Till[]) => {
    const shardOfTill = (t: Till) => String(shardOf(keyOf(t), generatorId));
    const warm = coveringCandidates(new Set(measured.map(shardOfTill)), (candidate) => [shardOfTill(till(`${arm}-warm`, candidate))]).map((candidate) =>
      till(`${arm}-warm`, candidate),
    );
    return { measured, warm };
  };
  const distinctCodesArm = async (name: 'one' | 'budget', limits: Limits): Promise<Arm> => {
    const id = await createPromotion(context, limits);
    const { measured, warm } = singleUse(
      name,
      id,
      Array.from({ length: total }, (_, i) => till(name, i)),
    );
    const codes = await issueCodes(context, id, warm.length + measured.length);
    return {
      name,
      sales: withCodes(measured, codes.slice(warm.length)),
      warmUp: [withCodes(warm, codes)],
      hashes: 1,
      floor: SINGLE_USE_FLOOR,
    };
  };

  // The baseline: codes of 50 promotions, taken round robin, so that the tills at work at any
  // moment redeem codes of different promotions.
  const manyIds: number[] = [];
  for (let made = 0; made < PROMOTIONS; made++) manyIds.push(await createPromotion(context));
  const manySales: Sale[] = new Array(total);
  const manyWarm: Sale[] = [];
  for (const [p, id] of manyIds.entries()) {
    const indexes = Array.from({ length: Math.ceil((total - p) / PROMOTIONS) }, (_, k) => p + k * PROMOTIONS);
    const { measured, warm } = singleUse(
      `many${p}`,
      id,
      indexes.map((i) => till('many', i)),
    );
    const codes = await issueCodes(context, id, warm.length + measured.length);
    manyWarm.push(...withCodes(warm, codes));
    withCodes(measured, codes.slice(warm.length)).forEach((sale, k) => (manySales[indexes[k]!] = sale));
  }
  const many: Arm = {
    name: 'many',
    sales: manySales,
    warmUp: [manyWarm],
    hashes: 1,
    floor: SINGLE_USE_FLOOR,
  };
  const one = await distinctCodesArm('one', {});
  const budget = await distinctCodesArm('budget', { max_redemptions: USES });

  // One code for everyone: each redemption goes through a code shard and a promotion shard,
  // picked by two independent hashes of its POS transaction.
  const codeGenerator = await createPromotion(context, { max_redemptions_per_code: USES });
  const [flyer] = await issueCodes(context, codeGenerator, 1);
  const flyerKey = codeKey(context.accountId, flyer!);
  const flyerShards = (t: Till) => [`code#${shardFor(keyOf(t), flyerKey)}`, `promotion#${shardOf(keyOf(t), codeGenerator)}`];
  const codeTills = Array.from({ length: total }, (_, i) => till('code', i));
  const codeWarm = coveringCandidates(new Set(codeTills.flatMap(flyerShards)), (candidate) => flyerShards(till('code-warm', candidate))).map((candidate) => ({
    ...till('code-warm', candidate),
    code: flyer!,
  }));
  const code: Arm = {
    name: 'code',
    sales: codeTills.map((t) => ({ ...t, code: flyer! })),
    warmUp: [codeWarm.slice(0, 1), codeWarm.slice(1)],
    hashes: 2,
    floor: MULTI_USE_FLOOR,
  };
  const arms = [many, one, budget, code];
  const ownItems = [`codes ${flyerKey}`];

  const { pos } = context.client();
  const redeem = (sale: Sale) =>
    pos.POST('/v2.0/redeemed_codes', {
      body: { transaction: { site_id: sale.siteId, pos_transaction_id: sale.posTransactionId, codes: [sale.code], basket } },
    });
  /** Tills redeeming `sales` concurrently, each taking the next in turn: redemptions a second, 200s, and the rest by status. */
  const drive = async (sales: readonly Sale[]) => {
    let next = 0;
    let redeemed = 0;
    const failures = new Map<string, number>();
    const failed: Sale[] = [];
    const begun = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(tills, sales.length) }, async () => {
        for (let sale = sales[next++]; sale !== undefined; sale = sales[next++]) {
          const answer = await redeem(sale);
          if (answer.status === 200) redeemed++;
          else {
            failures.set(failureOf(answer), (failures.get(failureOf(answer)) ?? 0) + 1);
            failed.push(sale);
          }
        }
      }),
    );
    return { rate: sales.length / ((performance.now() - begun) / 1000), redeemed, failures, failed };
  };
  const wireLine = (wire: WireSummary, redemptions: number) =>
    `${Object.entries(wire.byTarget)
      .map(([target, n]) => `${target} ${perRedemption(n, redemptions).toFixed(3)}`)
      .join(' + ')} = ${perRedemption(wire.requests, redemptions).toFixed(3)} requests a redemption; ` +
    `${wire.conflicts} cancelled by a conflict and tried again, ${wire.conditionFailures} cancelled by a condition (a shard created, a grant refilled) and written again; ` +
    `${perRedemption(wire.readUnits, redemptions).toFixed(2)} read + ${perRedemption(wire.writeUnits, redemptions).toFixed(2)} write CU a redemption, of which index upkeep ${perRedemption(wire.indexUnits, redemptions).toFixed(2)}; ` +
    `DynamoDB answers not 200: ${listed(new Map(Object.entries(wire.refused)))}; ${wire.resent} sent again by the SDK after its time-out of 2 s (${wire.abandoned} seen answered after their client had gone)`;
  const apart = (wire: WireSummary) => ({
    generator: wire.transactions.filter((items) => items.some((item) => item.startsWith('codeGenerators '))).length,
    pools: wire.transactions.filter((items) => items.some((item) => item.endsWith('#pool'))).length,
    codeItem: wire.transactions.filter((items) => items.some((item) => ownItems.includes(item))).length,
  });

  for (const arm of arms) {
    proxy.take();
    const begun = performance.now();
    const failures = new Map<string, number>();
    let redeemed = 0;
    let left = 0;
    for (const wave of arm.warmUp) {
      // A warm-up redemption that failed (a 503 on a loaded machine) is sent again, as a till
      // would: the shard it goes through must exist before the rounds.
      let sales = wave;
      for (let pass = 0; pass < WARM_UP_PASSES && sales.length > 0; pass++) {
        const driven = await drive(sales);
        redeemed += driven.redeemed;
        for (const [what, n] of driven.failures) failures.set(what, (failures.get(what) ?? 0) + n);
        sales = driven.failed;
      }
      left += sales.length;
    }
    const wire = summarizeCalls(proxy.take(), options.asideTables);
    const touched = apart(wire);
    log(
      `  peak warm-up (not measured), ${arm.name}: ${redeemed} redemptions in ${((performance.now() - begun) / 1000).toFixed(1)} s, one through each shard the measured ones reach; not 200 (sent again): ${listed(failures)}, ${left} still failing; ` +
        `${touched.generator} checked the generator (shard creations), ${touched.pools} touched a pool, ${touched.codeItem} the code's own item; ${wireLine(wire, redeemed)}`,
    );
  }

  const results = new Map(arms.map((arm) => [arm.name, { rates: [] as number[], redeemed: 0, failures: new Map<string, number>(), wire: emptySummary }]));
  for (let round = 0; round < rounds; round++) {
    // Forward, then backward (ABCD DCBA): over each pair of rounds every arm has the same mean
    // place, so a drift of the machine's speed (DynamoDB Local's JVM still warming up, a
    // neighbour's load) weighs on all arms alike.
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      proxy.take();
      const driven = await drive(arm.sales.slice(round * perRound, (round + 1) * perRound));
      const wire = summarizeCalls(proxy.take(), options.asideTables);
      const result = results.get(arm.name)!;
      result.rates.push(driven.rate);
      result.redeemed += driven.redeemed;
      for (const [what, n] of driven.failures) result.failures.set(what, (result.failures.get(what) ?? 0) + n);
      result.wire = addSummaries(result.wire, wire);
    }
  }

  const baseline = results.get('many')!;
  const rows: Row[] = [];
  const labels = {
    many: `distinct codes of ${PROMOTIONS} promotions`,
    one: 'distinct codes of one promotion',
    code: `one code of ${USES.toLocaleString('en')} uses`,
    budget: `distinct codes of one promotion with a budget of ${USES.toLocaleString('en')}`,
  };
  for (const arm of [one, code, budget]) {
    const result = results.get(arm.name)!;
    const ratios = result.rates.map((rate, round) => rate / baseline.rates[round]!);
    log(
      `  peak, ${arm.name}: ${result.rates.map((rate) => rate.toFixed(1)).join(', ')}/s against ${baseline.rates.map((rate) => rate.toFixed(1)).join(', ')}/s of ${labels.many}, ` +
        `per-round ratios ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')} (median ${middle(ratios).toFixed(2)}); not 200: ${listed(result.failures)} (baseline: ${listed(baseline.failures)})`,
    );
    rows.push(
      row(
        `peak: redemptions/s, ${tills} tills, ${labels[arm.name]} (baseline: ${labels.many}, same rounds)`,
        'req/s',
        middle(result.rates),
        middle(baseline.rates),
        `≥ 0.8 × baseline (median of per-round ratios: ${middle(ratios).toFixed(2)}), 0 errors: ${count(result.failures)} (baseline ${count(baseline.failures)})`,
      ),
    );
  }
  for (const arm of [one, code, budget]) {
    const { wire } = results.get(arm.name)!;
    const touched = apart(wire);
    const top = mostTouched(wire.transactions.map((items) => items.filter((item) => !countedApart(item, ownItems))));
    const shards = arm.hashes === 1 ? `${SHARD_COUNT} shards` : `2 × ${SHARD_COUNT} shards, two independent hashes`;
    log(`  peak, ${arm.name}: most-touched item ${top.item}, in ${top.count} of ${wire.transactions.length} redemptions`);
    rows.push(
      row(
        `peak: share of ${wire.transactions.length} redemptions of ${labels[arm.name]} with the most-touched item; apart: ${touched.pools} with a pool, ${touched.generator} with the generator${arm.name === 'code' ? `, ${touched.codeItem} with the code's item` : ''} (baseline: predicted, ${shards})`,
        'share',
        top.count / wire.transactions.length,
        predictedShare(wire.transactions.length, SHARD_COUNT, arm.hashes),
        'within noise of the prediction, ≪ 1',
      ),
    );
  }
  for (const arm of arms) {
    const { wire, redeemed } = results.get(arm.name)!;
    log(`  peak wire, ${arm.name}: ${wireLine(wire, redeemed)}`);
    const each = (n: number) => perRedemption(n, redeemed).toFixed(3);
    rows.push(
      row(
        `peak: DynamoDB requests per redemption, ${labels[arm.name]} (baseline: the design)`,
        'requests',
        perRedemption(wire.requests - wire.conflicts - wire.resent, redeemed),
        2,
        `≤ 2; not counted: conflicts tried again ${each(wire.conflicts)}, sent again by the SDK after a time-out ${each(wire.resent)}; of the figure, shard creations and refills ${each(wire.conditionFailures)}`,
      ),
    );
  }
  for (const arm of arms) {
    const { wire, redeemed } = results.get(arm.name)!;
    const each = (n: number) => perRedemption(n, redeemed).toFixed(2);
    rows.push(
      row(
        `peak: DynamoDB capacity per redemption, ${labels[arm.name]} (baseline: floor)`,
        'CU',
        perRedemption(wire.readUnits + wire.writeUnits, redeemed),
        arm.floor.units,
        `floor: ${arm.floor.how}; DynamoDB Local: ${each(wire.readUnits)} read (the transaction, not there yet, reads nothing) + ${each(wire.writeUnits)} write, of which index upkeep ${each(wire.indexUnits)} (not in the floor)`,
      ),
    );
  }
  return rows;
}
