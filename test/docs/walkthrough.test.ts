import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  bannerCommands,
  describeFailures,
  leavesRunning,
  COMMAND_TIMEOUT_MS,
  PACE_MS,
  parsePage,
  runnablePages,
  runPage,
  Session,
  startStack,
  type Stack,
} from '../../scripts/docs/walkthrough.ts';

/**
 * The README's walkthrough, and every docs/ page that shows console examples, run as written
 * against a fresh `npm start` stack each (scripts/docs/walkthrough.ts has the convention;
 * docs/writing-docs.md says it for writers). A failure names the example, shows the page's and
 * the run's lines, and says how to tell whether the page or the code is wrong.
 */
const pages = runnablePages();

/** The start banner's suggested first request, on a stack that no example has touched yet. */
async function checkBanner(stack: Stack) {
  const commands = bannerCommands(stack.log());
  expect(commands.map((command) => command.replace(/:\d+\//, ':PORT/'))).toEqual([
    'export TOKEN=$(cat .local/dev-token)',
    'curl -si http://127.0.0.1:PORT/v1.0/events -H "X-Auth-Token: $TOKEN"',
  ]);
  const session = new Session(stack.dir, stack.env);
  try {
    const outputs = [];
    for (const command of commands) outputs.push(await session.run(command));
    expect(outputs.map((output) => output.status)).toEqual([0, 0]);
    expect(outputs[1]!.output, "the banner's first request").toMatch(/^HTTP\/1\.1 200 OK\n[\s\S]*\n\{"events":\[\],"next_cursor":null\}$/);
  } finally {
    session.close();
  }
}

describe('the documentation runs as written', () => {
  it('has runnable pages, the README first', () => {
    expect(pages[0]).toBe('README.md');
  });

  it("runs at a person's pace: the README starts its receiver in the background, so its run pauses longer than 30 s after it", () => {
    const background = parsePage('README.md', readFileSync('README.md', 'utf8')).filter((example) => leavesRunning(example.command));
    expect(background.map((example) => example.command)).toEqual([expect.stringContaining('scripts/webhook-receiver.mjs')]);
    // Unless a developer shortened it on purpose for a quick run (TILLGATE_DOCS_PACE_MS).
    if (process.env.TILLGATE_DOCS_PACE_MS === undefined) expect(PACE_MS).toBeGreaterThan(30_000);
  });

  // A slow example runs only by hand (TILLGATE_DOCS_SLOW=1): a later example that used what it set
  // would pass or fail depending on whether it ran.
  it('sets nothing in a slow example that a later example uses', () => {
    for (const page of pages) {
      const examples = parsePage(page, readFileSync(page, 'utf8'));
      const setBySlow = new Set<string>();
      for (const example of examples) {
        if (example.slow) {
          for (const [, name] of example.command.matchAll(/(?:^|[\s;&|(])([A-Z_][A-Z0-9_]*)=/g)) setBySlow.add(name!);
          continue;
        }
        const used = [...example.command.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)].map(([, name]) => name!);
        expect(
          used.filter((name) => setBySlow.has(name)),
          `${page}:${example.line} uses what a slow example sets`,
        ).toEqual([]);
      }
    }
  });

  // Each page has its own stack on its own ports: they run side by side.
  it.concurrent.each(pages)(
    '%s: every console example prints what the page shows',
    async (page) => {
      const stack = await startStack();
      try {
        // The README starts where the banner of `npm start` leaves a newcomer: check that step too.
        if (page === 'README.md') await checkBanner(stack);
        const result = await runPage(page, { stack });
        expect(result.outcomes.length).toBeGreaterThan(0);
        const skipped = result.outcomes.filter((outcome) => outcome.skipped).length;
        if (skipped > 0) console.info(`${page}: ${skipped} slow examples not run (TILLGATE_DOCS_SLOW=1 runs them: docs/writing-docs.md, "Slow examples")`);
        const report = describeFailures(result);
        if (report) throw new Error(`\n${report}\n`);
      } finally {
        await stack.stop();
      }
    },
    // Room for one command that runs to the runner's own time-out, so that it reports which.
    120_000 + COMMAND_TIMEOUT_MS + PACE_MS,
  );
});
