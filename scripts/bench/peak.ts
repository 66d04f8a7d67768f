import { PROMOTION_SHARDS as SHARD_COUNT } from '../../functions/tables.ts';
import type { CountingProxy } from './proxy.ts';
import { median, row, type Row } from './report.ts';
import type { BenchContext } from './scenarios.ts';
import { mostTouched, touchedItems } from './touched-items.ts';

/**
 * One promotion at a chain's peak (docs/redemption.md, "One promotion at a chain's peak"), the rows
 * of `npm run bench` section 6, each beside a baseline of the same run:
 * - redemptions a second of 50 concurrent tills, each redeeming distinct single-use codes of ONE
 *   promotion; baseline: the same tills on codes of 50 promotions (no promotion shared), the
 *   arms interleaved round by round;
 * - the share of the one promotion's redemptions in which its most-touched item takes part (the
 *   items of each TransactWriteItems, as the counting proxy saw them); baseline: what the design
 *   predicts, the expected fullest of 64 shards when each redemption picks one at random;
 * - DynamoDB requests per redemption; baseline: the design's 2.
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

/** Making state on a busy machine: a 503 of DynamoDB Local (a time-out) is tried again, a few times. */
async function patiently<T extends { status: number }>(what: string, expected: number, send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send();
    if (answer.status === expected) return answer;
    if (answer.status !== 503 || attempt >= 5) throw new Error(`bench peak: could not ${what}: ${answer.status}`);
  }
}

async function promotionWithCodes(context: BenchContext, count: number): Promise<string[]> {
  const { core } = context.client();
  const created = await patiently('create a promotion', 201, () => core.POST('/v1.0/codegen', { body: { code_generator: promotion } }));
  const id = created.data!.code_generator.id;
  const codes: string[] = [];
  while (codes.length < count) {
    const body = { count: Math.min(250, count - codes.length) };
    const issued = await patiently('issue codes', 201, () => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body }));
    codes.push(...issued.data!.codes);
  }
  return codes;
}

/** The expected share of the fullest of `bins` bins when `balls` balls fall at random (simulated). */
function predictedShare(balls: number, bins: number, trials = 2000): number {
  let sum = 0;
  let state = 42;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  for (let trial = 0; trial < trials; trial++) {
    const counts = new Array<number>(bins).fill(0);
    for (let ball = 0; ball < balls; ball++) counts[Math.floor(random() * bins)]!++;
    sum += Math.max(...counts);
  }
  return sum / trials / balls;
}

export async function measurePeak(options: PeakOptions): Promise<Row[]> {
  const { context, proxy, tills, perRound, rounds, log } = options;
  const total = perRound * rounds;
  log(`  peak: ${total} codes of one promotion, and of ${tills} promotions …`);
  const one = await promotionWithCodes(context, total);
  const lists: string[][] = [];
  for (let made = 0; made < tills; made++) lists.push(await promotionWithCodes(context, Math.ceil(total / tills)));
  // Round robin, so that the tills at work at any moment redeem codes of different promotions.
  const many = lists[0]!.flatMap((_, i) => lists.map((list) => list[i]!));
  const { pos } = context.client();
  let sale = 0;
  const redeem = (code: string) =>
    pos.POST('/v2.0/redeemed_codes', {
      body: {
        transaction: {
          site_id: `peak-${sale % 97}`,
          pos_transaction_id: `peak-${context.unique()}-${sale++}`,
          codes: [code],
          basket: { total: 2500, currency: 'EUR' },
        },
      },
    });

  /** Tills redeeming `codes` concurrently, each its share in turn; redemptions a second, errors. */
  const arm = async (codes: string[]) => {
    let next = 0;
    let errors = 0;
    const begun = performance.now();
    await Promise.all(
      Array.from({ length: tills }, async () => {
        for (let code = codes[next++]; code !== undefined; code = codes[next++]) if ((await redeem(code)).status !== 200) errors++;
      }),
    );
    return { rate: codes.length / ((performance.now() - begun) / 1000), errors };
  };

  const rates = { one: [] as number[], many: [] as number[] };
  let errors = 0;
  const transactions: string[][] = [];
  let requests = 0;
  let conflicts = 0;
  for (let round = 0; round < rounds; round++) {
    const slice = (codes: string[]) => codes.slice(round * perRound, (round + 1) * perRound);
    proxy.take();
    // The arms take turns going first: the first of a round meets what the issuance left behind.
    const spreadFirst = round % 2 === 1 ? await arm(slice(many)) : undefined;
    proxy.take();
    const single = await arm(slice(one));
    const calls = proxy.take();
    transactions.push(...calls.filter((call) => call.target === 'TransactWriteItems' && call.status === 200).map(touchedItems));
    requests += calls.filter((call) => !options.asideTables.includes(call.request.TableName as string)).length;
    conflicts += calls.filter((call) => JSON.stringify(call.response).includes('TransactionConflict')).length;
    const spread = spreadFirst ?? (await arm(slice(many)));
    rates.one.push(single.rate);
    rates.many.push(spread.rate);
    errors += single.errors + spread.errors;
  }
  // The generator's own item takes part only where a redemption creates one of the promotion's
  // shards, at most once per shard in the promotion's life (data/promotion-shards.ts): counted
  // apart, as what a promotion pays once, not at its peak.
  const isGenerator = (item: string) => item.startsWith('codeGenerators ');
  const creations = transactions.filter((items) => items.some(isGenerator)).length;
  const top = mostTouched(transactions.map((items) => items.filter((item) => !isGenerator(item))));
  const share = top.count / transactions.length;
  const predicted = predictedShare(transactions.length, SHARD_COUNT);
  log(
    `  peak: one promotion ${median(rates.one).toFixed(0)}/s, ${tills} promotions ${median(rates.many).toFixed(0)}/s (medians of ${rounds} interleaved rounds), ${errors} errors, ${conflicts} transactions cancelled by a conflict and tried again; most-touched ${top.item} in ${top.count} of ${transactions.length}; ${creations} created a shard and checked the generator`,
  );
  return [
    row(
      `peak: redemptions/s, ${tills} tills, distinct codes of one promotion (baseline: of ${tills} promotions)`,
      'req/s',
      median(rates.one),
      median(rates.many),
      `≥ 0.8 × baseline, 0 errors (${errors})`,
    ),
    row(
      `peak: share of one promotion's ${transactions.length} redemptions with its most-touched item, the ≤ ${SHARD_COUNT} shard creations aside (baseline: predicted, ${SHARD_COUNT} shards)`,
      'share',
      share,
      predicted,
      'within noise of the prediction, ≪ 1',
    ),
    row(
      'peak: DynamoDB requests per redemption, one promotion (baseline: the design)',
      'requests',
      (requests - conflicts) / transactions.length,
      2,
      '≤ 2 (conflicts retried not counted)',
    ),
  ];
}
