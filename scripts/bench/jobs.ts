import type { LocalApi } from '../../local/server.ts';
import { startLocalWebhooks, type WorkerLoader } from '../../local/webhooks.ts';
import type { CountingProxy } from './proxy.ts';
import { row, type Row } from './report.ts';

/**
 * Section 7, issuance jobs (PRODUCT.md, "Bulk"): a job's codes per second against the same run's
 * raw conditional puts on DynamoDB Local, and the write units a job's code costs against its floor.
 * - raw: `codes` conditional PutItems of items shaped as a job's codes (data/codes.ts
 *   newJobCodeItem), 80 in flight (what the job's 5 workers × 16 puts reach at most);
 * - job: POST …/issuance_jobs of `codes` codes on a fresh account, polled every 100 ms until
 *   `completed`: from the 202 to the poll that sees it, the worker running on the local stand-in
 *   of its queue (local/sqs-queue.ts), through the same counting proxy.
 * The two arms alternate (raw, job; job, raw; …), `rounds` each; medians of codes per second and
 * the median of the per-round ratios. Write units: every write of the job's calls (its puts, the
 * chunks recorded on the job, the completing transaction; ids aside) ÷ codes, against the floor
 * of 2 (one item ≤1 KB on the table and its entry on the one index, by_redeemed).
 */
export interface JobBenchOptions {
  readonly api: LocalApi;
  readonly proxy: CountingProxy;
  readonly dynamodbEndpoint: string;
  readonly tableNames: Record<string, string>;
  readonly loadWorker: WorkerLoader;
  readonly freshToken: () => Promise<string>;
  readonly codes: number;
  readonly rounds: number;
  readonly log: (line: string) => void;
}

const IN_FLIGHT = 80;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export async function measureJobs(options: JobBenchOptions): Promise<Row[]> {
  const queues = await startLocalWebhooks({
    endpoint: options.dynamodbEndpoint,
    tableNames: options.tableNames,
    loadWorker: options.loadWorker,
    log: () => undefined,
    streams: false,
  });
  const { newJobCodeItem, putJobCode } = await import('../../functions/data/codes.ts');
  let serial = 0;
  const raw = async (): Promise<number> => {
    const prefix = `BENCHRAW${serial++}X`;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < options.codes) {
          const slot = next++;
          const put = await putJobCode(newJobCodeItem(999_999_999, 1, `${prefix}${slot}`, 1, slot));
          if (!put.written) throw new Error('bench: a raw put found its code taken');
        }
      }),
    );
    return options.codes / ((performance.now() - started) / 1000);
  };
  const writeUnits: number[] = [];
  const job = async (): Promise<number> => {
    const token = await options.freshToken();
    const core = options.api.urls.core;
    const headers = { 'X-Auth-Token': token, 'Content-Type': 'application/json' };
    const made = await fetch(`${core}/v1.0/codegen`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ code_generator: { generation_type: 'tillgate', code_length: 10, store_id: 1 } }),
    });
    const generator = (await made.json()) as { code_generator: { id: number } };
    options.proxy.take();
    const started = performance.now();
    const answer = await fetch(`${core}/v1.0/codegen/${generator.code_generator.id}/issuance_jobs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ count: options.codes }),
    });
    if (answer.status !== 202) throw new Error(`bench: issuance job not started: ${answer.status} ${await answer.text()}`);
    const { issuance_job } = (await answer.json()) as { issuance_job: { id: number } };
    for (;;) {
      const read = await fetch(`${core}/v1.0/issuance_jobs/${issuance_job.id}`, { headers });
      const { issuance_job: now } = (await read.json()) as { issuance_job: { status: string; error: string | null } };
      if (now.status === 'completed') break;
      if (now.status !== 'running') throw new Error(`bench: issuance job ${now.status}: ${now.error}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    const writes = options.proxy
      .take()
      .filter((call) => ['PutItem', 'UpdateItem', 'TransactWriteItems'].includes(call.target))
      // Id blocks (the counters' sequence) are not the job's.
      .filter((call) => !JSON.stringify(call.request).includes('{"name":{"S":"ids"}}'));
    writeUnits.push(writes.reduce((sum, call) => sum + call.capacityUnits, 0) / options.codes);
    return options.codes / seconds;
  };
  const rawRates: number[] = [];
  const jobRates: number[] = [];
  const ratios: number[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      let rawRate: number;
      let jobRate: number;
      if (round % 2 === 0) {
        rawRate = await raw();
        jobRate = await job();
      } else {
        jobRate = await job();
        rawRate = await raw();
      }
      rawRates.push(rawRate);
      jobRates.push(jobRate);
      ratios.push(jobRate / rawRate);
      options.log(
        `bench: jobs round ${round + 1}: raw ${rawRate.toFixed(0)} puts/s, job ${jobRate.toFixed(0)} codes/s, ${writeUnits.at(-1)!.toFixed(3)} WRU/code`,
      );
    }
  } finally {
    await queues.close();
  }
  const jobMedian = median(jobRates);
  const rawMedian = median(rawRates);
  return [
    row(
      `issuance job: codes/s (${options.codes} codes; baseline raw conditional puts, ${IN_FLIGHT} in flight)`,
      'codes/s',
      jobMedian,
      rawMedian,
      `ratio median ${median(ratios).toFixed(2)}`,
    ),
    row(`issuance job: write units per code (${options.codes} codes)`, 'WRU/code', median(writeUnits), 2, '≤ 2 (PRODUCT.md); floor 2: table + by_redeemed'),
  ];
}
