import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { row, type Row } from './report.ts';
import type { BenchContext } from './scenarios.ts';

/**
 * Exports (PRODUCT.md, "Bulk"): rows per second and peak memory of the process writing an export
 * of 100,000 and of 1,000,000 codes, each beside the same process reading the same codes list
 * pages and formatting the same CSV without uploading it (the baseline: what the export cannot go
 * below). The codes are seeded straight into DynamoDB Local with BatchWriteItem (as the items an
 * issuance writes, data/codes.ts newCodeItem), not through the API. Each arm runs in a child
 * process of its own (`--child`), which reports its wall time and its peak resident set
 * (process.resourceUsage().maxRSS): memory that grew with the file would show as a peak at
 * 1,000,000 codes well above the one at 100,000.
 */
const ROOT = resolve(import.meta.dirname, '../..');

interface ChildResult {
  readonly rows: number;
  readonly ms: number;
  readonly maxRssMb: number;
  readonly bytes: number;
}

if (process.argv.includes('--child')) {
  const [mode, account, generator, key] = process.argv.slice(process.argv.indexOf('--child') + 1);
  const { exportStream } = await import('../../functions/codes/export-csv.ts');
  const { uploadStream } = await import('../../functions/runtime/storage.ts');
  const started = performance.now();
  const file = exportStream(Number(account), Number(generator), undefined);
  let bytes = 0;
  const counted = file.stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
  if (mode === 'upload') {
    await uploadStream('exports', key!, counted as Readable, { contentType: 'text/csv; charset=utf-8' });
  } else {
    await pipeline(counted, new Writable({ write: (_chunk, _encoding, done) => done() }));
  }
  const result: ChildResult = { rows: file.rows(), ms: performance.now() - started, maxRssMb: process.resourceUsage().maxRSS / 1024, bytes };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

/** Seeds `count` issued codes of the generator, 25 to a BatchWriteItem, 16 batches in flight. */
async function seed(endpoint: string, table: string, accountId: number, generatorId: number, count: number, log: (line: string) => void): Promise<void> {
  const { newCodeItem } = await import('../../functions/data/codes.ts');
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
  const issuedAt = new Date().toISOString();
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) {
      const start = next;
      next = Math.min(count, next + 25);
      let items: Record<string, unknown>[] = [];
      for (let i = start; i < next; i++) items.push({ ...newCodeItem(accountId, generatorId, `BENCH-${String(i).padStart(8, '0')}`, issuedAt, 1, false) });
      while (items.length > 0) {
        const answer = await client.send(new BatchWriteCommand({ RequestItems: { [table]: items.map((Item) => ({ PutRequest: { Item } })) } }));
        items = (answer.UnprocessedItems?.[table] ?? []).map((request) => request.PutRequest!.Item!);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  log(`  seeded ${count.toLocaleString('en')} codes in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  client.destroy();
}

function child(mode: 'read' | 'upload', args: string[], environment: Record<string, string>): Promise<ChildResult> {
  return new Promise((done, fail) => {
    const process_ = spawn(join(ROOT, 'node_modules/.bin/node'), ['--import', 'tsx', join(ROOT, 'scripts/bench/exports.ts'), '--child', mode, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...environment, POWERTOOLS_LOG_LEVEL: 'SILENT' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    process_.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    process_.on('exit', (code) =>
      code === 0 ? done(JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult) : fail(new Error(`bench: export child (${mode}) exited ${code}`)),
    );
  });
}

export async function measureExports(options: {
  readonly context: BenchContext;
  /** DynamoDB Local itself, not the counting proxy. */
  readonly dynamodbEndpoint: string;
  readonly codesTable: string;
  readonly sizes: readonly number[];
  readonly log: (line: string) => void;
}): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of options.sizes) {
    const accountId = options.context.accountId;
    const created = await options.context
      .client()
      .core.POST('/v1.0/codegen', { body: { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'BENCH-', store_id: 1 } } });
    if (!created.data) throw new Error(`bench: could not create a generator: ${created.response.status}`);
    const generatorId = created.data.code_generator.id;
    await seed(options.dynamodbEndpoint, options.codesTable, accountId, generatorId, size, options.log);
    const environment = { DYNAMODB_ENDPOINT: options.dynamodbEndpoint };
    const args = [String(accountId), String(generatorId), `bench/${generatorId}.csv`];
    // Read first, then upload, then read again: each arm's figure is the better of its runs on a shared machine.
    const read = [await child('read', args, environment)];
    const upload = await child('upload', args, environment);
    read.push(await child('read', args, environment));
    const baseline = read.reduce((best, run) => (run.ms < best.ms ? run : best));
    for (const run of [...read, upload]) if (run.rows !== size) throw new Error(`bench: an export of ${size} codes wrote ${run.rows} rows`);
    const label = size.toLocaleString('en');
    options.log(
      `  ${label} codes: export ${(upload.ms / 1000).toFixed(1)} s, ${(upload.bytes / 1e6).toFixed(1)} MB, peak RSS ${upload.maxRssMb.toFixed(0)} MB; ` +
        `reads alone ${(baseline.ms / 1000).toFixed(1)} s, peak RSS ${Math.max(...read.map((r) => r.maxRssMb)).toFixed(0)} MB`,
    );
    rows.push(
      row(
        `export of ${label} codes: rows per second (baseline: the same reads and CSV, no upload)`,
        'rows/s',
        (size / upload.ms) * 1000,
        (size / baseline.ms) * 1000,
        'AWS: 1,000,000 within 2 min',
      ),
      row(
        `export of ${label} codes: peak memory of the exporting process (baseline: the same reads, no upload)`,
        'MB',
        upload.maxRssMb,
        Math.max(...read.map((r) => r.maxRssMb)),
        'does not grow with the file',
      ),
    );
  }
  return rows;
}
