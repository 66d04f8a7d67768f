import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';

/** One line of the bench's table and of reports/bench.json. */
export interface Row {
  readonly metric: string;
  readonly unit: string;
  readonly tillgate: number | null;
  readonly baseline: number | null;
  /** tillgate ÷ baseline, when both are there. */
  readonly ratio: number | null;
  readonly target: string;
}

export function row(metric: string, unit: string, tillgate: number | null, baseline: number | null, target: string): Row {
  const ratio = tillgate !== null && baseline !== null && baseline !== 0 ? tillgate / baseline : null;
  return { metric, unit, tillgate, baseline, ratio, target };
}

/** Enough digits to compare, no more: 3 significant digits, integers as they are. */
export function formatNumber(value: number | null): string {
  if (value === null || Number.isNaN(value)) return '–';
  if (Number.isInteger(value)) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  if (magnitude >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

export function formatTable(rows: readonly Row[]): string {
  const header = ['metric', 'unit', 'tillgate', 'baseline', 'ratio', 'target'];
  const cells = rows.map((r) => [r.metric, r.unit, formatNumber(r.tillgate), formatNumber(r.baseline), r.ratio === null ? '–' : r.ratio.toFixed(2), r.target]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const numeric = [false, false, true, true, true, false];
  const line = (c: string[]) =>
    c
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export function machine(): string {
  const list = cpus();
  return `${list.length} × ${list[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${process.platform} ${process.arch}, Node ${process.version}`;
}

export function reportJson(rows: readonly Row[], date = new Date(), machineName = machine()) {
  return { date: date.toISOString(), machine: machineName, rows };
}

export function writeReport(file: string, rows: readonly Row[], date = new Date()): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(reportJson(rows, date), null, 2)}\n`);
}

// ---------------------------------------------------------------- statistics

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** The median with an even number of values as the mean of the two middle ones (nearest-rank `median` takes the lower). */
export function middle(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

/** Nearest-rank percentile. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
