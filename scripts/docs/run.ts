/**
 * `npm run docs`: runs the documentation's console examples against fresh local stacks and
 * checks the generated sections (scripts/docs/walkthrough.ts and generated.ts say how).
 *
 *   npm run docs                          check every page (what the test suite checks)
 *   npm run docs -- --update              rewrite the generated sections and the outputs that differ
 *   npm run docs -- --update README.md    the same for one page
 *   TILLGATE_DOCS_SLOW=1 npm run docs …   with the ```console slow blocks too (minutes)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fillSections, renderSections, sectionNames } from './generated.ts';
import { synthesizedTemplates } from './templates.ts';
import { describeFailures, ROOT, runnablePages, runPage, writePage } from './walkthrough.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { update: { type: 'boolean', default: false } } });
const read = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');

const { plain, everything } = synthesizedTemplates();
const sections = renderSections(plain, everything);
const everyPage = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const pages = positionals.length > 0 ? positionals : everyPage;

let failed = false;
for (const page of pages) {
  const text = read(page);
  const names = sectionNames(page, text);
  if (names.length === 0) continue;
  const filled = fillSections(page, text, sections);
  if (filled === text) continue;
  if (values.update) {
    writePage(page, filled);
    console.log(`${page}: generated sections rewritten (${names.join(', ')})`);
  } else {
    console.log(`${page}: generated sections are stale; run \`npm run docs -- --update\``);
    failed = true;
  }
}

const runnable = runnablePages();
const started = Date.now();
// Each page has its own stack on its own ports, so they run side by side.
const results = await Promise.all(pages.filter((candidate) => runnable.includes(candidate)).map((page) => runPage(page)));
for (const result of results) {
  const { page } = result;
  const bad = result.outcomes.filter((outcome) => !outcome.matches);
  const skipped = result.outcomes.filter((outcome) => outcome.skipped).length;
  const notRun = skipped > 0 ? ` (${skipped} slow ones not run: TILLGATE_DOCS_SLOW=1 runs them)` : '';
  console.log(`${page}: ${result.outcomes.length - bad.length - skipped} of ${result.outcomes.length} examples as shown${notRun}`);
  if (bad.length === 0) continue;
  if (values.update) {
    writePage(page, result.updated);
    const stillFailing = bad.filter((outcome) => outcome.status !== 0);
    console.log(`${page}: outputs of ${bad.length - stillFailing.length} example(s) rewritten from this run; review \`git diff ${page}\``);
    if (stillFailing.length > 0) {
      console.log(describeFailures({ ...result, outcomes: stillFailing }));
      failed = true;
    }
  } else {
    console.log(describeFailures(result));
    failed = true;
  }
}
console.log(`${results.length} page(s) run in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
