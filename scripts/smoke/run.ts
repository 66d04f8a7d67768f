import { cleanUp, checks, checksOf, gatewayChecks, newState } from './checks.ts';
import { Skip, SmokeRun, type Outcome, type SmokeOptions } from './smoke.ts';

/**
 * The whole run: the gateway's own answers, then every check of checks.ts whose operation is in
 * the route table (a token check for a route with none written), then whatever cleanup a failed
 * check left to do.
 */
export interface SmokeReport {
  readonly run: SmokeRun;
  readonly passed: boolean;
  readonly durationMs: number;
  /** Checks of operations the route table does not have (yet): not run. */
  readonly notRun: readonly string[];
}

export async function runSmoke(options: SmokeOptions): Promise<SmokeReport> {
  const run = new SmokeRun(options);
  options.onStart?.(run);
  const state = newState(run);
  const started = performance.now();
  const notRun: string[] = [];
  const webhookChecks = Object.entries(checks).filter(([operationId, check]) => check.webhook && run.has(operationId));
  try {
    await gatewayChecks(run, state);
    if (webhookChecks.length > 0 && !options.webhookUrl) {
      run.record({
        name: 'webhooks',
        result: 'skip',
        problems: [],
        reason: `${webhookChecks.length} webhook routes not checked: no --webhook-url given (a URL that answers POST with a 2xx; the run's events are delivered there)`,
      });
    }
    for (const [operationId, check] of checksOf(run.routes)) {
      if (options.signal?.aborted) {
        run.record({ name: 'interrupted', result: 'fail', problems: [], reason: `stopped before ${operationId}; cleaning up what the run made` });
        break;
      }
      if (!run.has(operationId)) {
        notRun.push(operationId);
        run.record({ name: operationId, result: 'info', problems: [], reason: 'not run: not in the route table', quiet: true });
        continue;
      }
      if (check.webhook && !options.webhookUrl) continue;
      try {
        await check.run(run, state);
      } catch (error) {
        const route = run.route(operationId);
        const skipped = error instanceof Skip;
        run.record({
          name: operationId,
          method: route.method,
          path: route.path,
          result: skipped ? 'skip' : 'fail',
          problems: skipped ? [] : [`the smoke check itself failed: ${(error as Error).message}`],
          reason: skipped ? error.message : undefined,
        });
      }
    }
  } finally {
    await cleanUp(run, state);
  }
  const passed = !run.outcomes.some((outcome) => outcome.result === 'fail');
  return { run, passed, durationMs: performance.now() - started, notRun };
}

const NAME_WIDTH = 22;
const REQUEST_WIDTH = 56;

/** One line of the report, e.g. `ok   201  createCodeGenerator     POST /v1.0/codegen     38 ms`. */
export function formatOutcome(outcome: Outcome): string {
  const label = { ok: 'ok', fail: 'FAIL', skip: 'skip', info: 'info' }[outcome.result].padEnd(4);
  const status = outcome.status === undefined || outcome.status === 0 ? '   ' : String(outcome.status);
  const request = outcome.method ? `${outcome.method} ${outcome.path}${outcome.note ? ` (${outcome.note})` : ''}` : '';
  const latency = outcome.latencyMs === undefined ? '' : `${Math.round(outcome.latencyMs)} ms`;
  const detail = outcome.problems.join('; ') || outcome.reason || '';
  if (!request) return `${label} ${status}  ${outcome.name.padEnd(NAME_WIDTH)} ${detail}`.trimEnd();
  return `${label} ${status}  ${outcome.name.padEnd(NAME_WIDTH)} ${request.padEnd(REQUEST_WIDTH)} ${latency.padStart(7)}${detail ? `  ${detail}` : ''}`.trimEnd();
}

/** Whether a line is shown: quiet lines (later pages, not-run checks) only when they failed, or with --verbose. */
export const shown = (outcome: Outcome, verbose: boolean) => verbose || !outcome.quiet || outcome.result === 'fail';

function counts(report: SmokeReport) {
  const counted = report.run.outcomes.filter((outcome) => !outcome.quiet || outcome.result === 'fail');
  return {
    passed: counted.filter((outcome) => outcome.result === 'ok').length,
    failed: counted.filter((outcome) => outcome.result === 'fail').length,
    skipped: counted.filter((outcome) => outcome.result === 'skip').length,
  };
}

export function header(run: SmokeRun): string {
  const { urls } = run.options;
  return [`tillgate smoke run ${run.runId} at ${run.startedAt}`, `  core  ${urls.core}`, `  pos   ${urls.pos}`, ''].join('\n');
}

export function summary(report: SmokeReport): string {
  const { passed, failed, skipped } = counts(report);
  const seconds = (report.durationMs / 1000).toFixed(1);
  const skippedText = skipped > 0 ? `, ${skipped} skipped` : '';
  return report.passed
    ? `ok: ${passed} checks passed${skippedText} in ${seconds} s (smoke run ${report.run.runId})`
    : `FAIL: ${failed} of ${passed + failed} checks failed${skippedText} in ${seconds} s (smoke run ${report.run.runId})`;
}

/** The `--json` document: everything the lines say, for a pipeline to read. */
export function jsonReport(report: SmokeReport) {
  const { run } = report;
  return {
    ok: report.passed,
    run_id: run.runId,
    started_at: run.startedAt,
    duration_ms: Math.round(report.durationMs),
    urls: run.options.urls,
    summary: counts(report),
    checks: run.outcomes
      .filter((outcome) => outcome.result !== 'info')
      .map((outcome) => ({
        name: outcome.name,
        result: outcome.result,
        ...(outcome.method ? { method: outcome.method, path: outcome.path } : {}),
        ...(outcome.note ? { note: outcome.note } : {}),
        ...(outcome.expected !== undefined ? { expected_status: outcome.expected } : {}),
        ...(outcome.status ? { status: outcome.status } : {}),
        ...(outcome.latencyMs !== undefined ? { latency_ms: Math.round(outcome.latencyMs * 10) / 10 } : {}),
        problems: outcome.problems,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
      })),
    not_run: report.notRun,
  };
}
