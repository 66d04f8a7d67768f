import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds the long files took in a fresh clone's CI run (reports/vitest.json of `.ci/run`,
 * 2026-11-26), for a machine without vitest's cache of the last run. Approximate on purpose: only
 * the order matters. A file missing here keeps vitest's own order (after the listed ones).
 */
const KNOWN_SECONDS: Record<string, number> = {
  'test/attack/codes/issuance-job-load.test.ts': 160,
  'test/attack/webhooks/soak.test.ts': 98,
  'test/attack/codes/issuance-concurrency.test.ts': 93,
  'test/docs/walkthrough.test.ts': 86,
  'test/e2e/webhooks/adaptive-lanes.test.ts': 58,
  'test/attack/database/outage.test.ts': 52,
  'test/attack/codes/issuance-job-kill.test.ts': 40,
  'test/tools/tokens.test.ts': 32,
  'test/smoke/smoke.test.ts': 30,
  'test/unit/local/dynamodb-files.test.ts': 27,
  'test/e2e/webhooks/isolation.test.ts': 25,
  'test/attack/redemption/fuzz.test.ts': 24,
  'test/e2e/webhooks/endpoints-and-deliveries.test.ts': 22,
  'test/attack/redemption/counting-races.test.ts': 18,
  'test/attack/codes/issuance-jobs.test.ts': 18,
  'test/attack/database/deadline.test.ts': 16,
  'test/contract/portman.test.ts': 16,
  'test/e2e/codes/codes.test.ts': 15,
  'test/attack/redemption/races.test.ts': 13,
  'test/attack/webhooks/claim-faults.test.ts': 12,
  'test/attack/codes/fuzz.test.ts': 12,
  'test/attack/codes/issuance-finalisation.test.ts': 12,
  'test/attack/redemption/spread.test.ts': 11,
};

/**
 * Longest first, within each group (`sequence.groupOrder`), whatever the project: with two
 * workers, a long file that starts last is a tail the other worker waits out (the docs walkthrough,
 * 86 s, started 10 minutes into a fresh clone's run, when vitest ordered the files it had no
 * times for by size). Durations come from vitest's cache of the last run, else KNOWN_SECONDS.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const seconds = (spec: TestSpecification) => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec)?.duration;
      return cached !== undefined ? cached / 1000 : (KNOWN_SECONDS[relative(spec.project.config.root, spec.moduleId)] ?? 0);
    };
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return ordered
      .map((spec, index) => ({ spec, index, seconds: seconds(spec) }))
      .sort((a, b) => group(a.spec) - group(b.spec) || b.seconds - a.seconds || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
