import { parseArgs } from 'node:util';
import { startLocalStack } from '../local/stack.ts';

/**
 * How many redemptions a second one code generator takes, with concurrent tills, on the local
 * stack (DynamoDB Local in memory, the local server with production settings):
 *   npx tsx scripts/redemption-rate.ts --tills 16 --seconds 20 [--generators 1]
 * Each till redeems one fresh code of the generator per request, in a new transaction, as fast
 * as it is answered. Every redemption condition-checks its generator's status inside its
 * transaction (deactivation is immediate), so all of a generator's redemptions meet on that one
 * item; with --generators N the tills spread over N generators, to show what that costs.
 * Prints requests, statuses and redemptions a second. Local figures: DynamoDB Local is slower
 * than DynamoDB and serialises more, so read them as a shape, not as AWS's numbers.
 */
const { values } = parseArgs({
  options: { tills: { type: 'string', default: '16' }, seconds: { type: 'string', default: '20' }, generators: { type: 'string', default: '1' } },
});
const tills = Number(values.tills);
const seconds = Number(values.seconds);
const generatorCount = Number(values.generators);

const stack = await startLocalStack({
  tablePrefix: 'rate-',
  environment: {
    POWERTOOLS_METRICS_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'ERROR',
    TOKEN_CACHE_SECONDS: '30',
  },
  api: { log: () => undefined },
});
const api = stack.api!;
const { issueToken } = await import('../functions/http/tokens.ts');

try {
  const { token } = await issueToken(700_001, 'redemption rate', 'all');
  const send = async (host: 'core' | 'pos', path: string, body: unknown) => {
    const response = await fetch(`${api.urls[host]}${path}`, {
      method: 'POST',
      headers: { 'X-Auth-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as any };
  };
  // Enough codes for the run: a guess of 400 a second, at most.
  const codes: string[][] = [];
  for (let g = 0; g < generatorCount; g++) {
    const created = await send('core', '/v1.0/codegen', { code_generator: { generation_type: 'tillgate', code_length: 10, store_id: 1, description: 'rate' } });
    const mine: string[] = [];
    const wanted = Math.ceil((400 * seconds) / generatorCount);
    while (mine.length < wanted) {
      // A cold DynamoDB Local on a busy machine may answer a first large issuance with 503: again.
      const issued = await send('core', `/v1.0/codegen/${created.json.code_generator.id}/codes`, { count: Math.min(500, wanted - mine.length) });
      if (issued.status === 201) mine.push(...issued.json.codes);
      else if (issued.status !== 503) throw new Error(`could not issue codes: ${issued.status}`);
    }
    codes.push(mine);
  }
  console.log(`redemption-rate: ${tills} tills, ${generatorCount} generator(s), ${seconds} s`);
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  let redeemed = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: tills }, async (_, till) => {
      for (let n = 0; performance.now() < end; n++) {
        const pool = codes[till % generatorCount]!;
        const code = pool.pop();
        if (!code) return;
        const started = performance.now();
        const answer = await send('pos', '/v2.0/redeemed_codes', { transaction: { site_id: 'rate', pos_transaction_id: `${till}-${n}`, codes: [code] } });
        latencies.push(performance.now() - started);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 200) redeemed++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(0);
  console.log(
    `redemption-rate: ${redeemed} redemptions in ${seconds} s = ${(redeemed / seconds).toFixed(1)}/s over ${generatorCount} generator(s); statuses ${JSON.stringify(Object.fromEntries(statuses))}; latency p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`,
  );
} finally {
  await stack.stop();
}
