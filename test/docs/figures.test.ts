import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { counted, fillSections, renderSections, sectionNames, statedCounts, type TemplateJson } from '../../scripts/docs/generated.ts';
import { synthesizedTemplates } from '../../scripts/docs/templates.ts';
import { codeBlocks, parsePage } from '../../scripts/docs/walkthrough.ts';

/**
 * Figures the pages state about the template and the tables are derived, not typed: the
 * generated sections (routes, tables, outputs) are what `npm run docs -- --update` writes from
 * the route table, the table list and the synthesized template, and every count in prose
 * ("38 alarms", "the seven DynamoDB tables") is the template's.
 */
const pages = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const read = (page: string) => readFileSync(page, 'utf8');

let plain: TemplateJson;
let everything: TemplateJson;
beforeAll(() => {
  ({ plain, everything } = synthesizedTemplates());
}, 120_000);

describe('generated sections', () => {
  it.each(pages)('%s: its generated sections are current', (page) => {
    const text = read(page);
    expect(fillSections(page, text, renderSections(plain, everything)), 'stale: run `npm run docs -- --update`').toBe(text);
  });

  it('every list the pages state is generated somewhere: routes, their tables, the tables, the outputs', () => {
    const shown = pages.flatMap((page) => sectionNames(page, read(page)));
    expect([...new Set(shown)].sort()).toEqual(Object.keys(renderSections(plain, everything)).sort());
  });

  it('the outputs list holds every output of the template, the custom-domain ones and the table names included', () => {
    const outputs = renderSections(plain, everything).outputs!;
    for (const name of ['CoreBaseUrl', 'PosBaseUrl', 'CodesTableName', 'CoreDomainTarget', 'PosDomainTarget', 'DashboardName']) {
      expect(outputs).toContain(`\`${name}\``);
    }
    expect(outputs).toMatch(/`CoreApiEndpoint[0-9A-F]*`/);
  });
});

describe('counts in prose', () => {
  it.each(pages)('%s: every "N alarms" and "N DynamoDB tables" is the template\'s count', (page) => {
    const figures = counted(plain);
    for (const claim of statedCounts(read(page))) {
      expect(claim.stated, `${page}:${claim.line}: "${claim.phrase}" (${figures[claim.what].from}: ${figures[claim.what].value})`).toBe(
        figures[claim.what].value,
      );
    }
  });

  it('the deploy page states both counts, so that they stay checked', () => {
    const claims = statedCounts(read('docs/deploying.md'));
    expect(new Set(claims.map((claim) => claim.what))).toEqual(new Set(['alarms', 'tables']));
  });
});

describe('commands on the pages', () => {
  it.each(pages)('%s: a command for the local stack is in a console block, so it runs in the walkthrough test', (page) => {
    const text = read(page);
    const shown = codeBlocks(page, text).filter((block) => block.lang !== 'console');
    const local = shown.filter((block) => block.lines.some((line) => /127\.0\.0\.1:300[01]|localhost:300[01]/.test(line)));
    expect(
      local.map((block) => `${page}:${block.start}`),
      'a command for the local stack belongs in a ```console block, with "$ " lines (docs/writing-docs.md)',
    ).toEqual([]);
    expect(() => parsePage(page, text)).not.toThrow();
  });
});
