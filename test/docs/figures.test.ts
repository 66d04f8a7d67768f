import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { counted, fillSections, renderSections, sectionNames, statedCounts, type TemplateJson } from '../../scripts/docs/generated.ts';
import { synthesizedTemplates } from '../../scripts/docs/templates.ts';
import { defaults, readConfig } from '../../infra/config.ts';
import { gatewayErrors, HEADERS_TOO_LARGE, METHOD_NOT_ALLOWED, SOURCE_RATE_LIMITED, TOKEN_RATE_LIMITED } from '../../infra/gateway-errors.ts';
import type { ErrorCode } from '../../functions/http/errors.ts';
import { MAX_BODY_BYTES } from '../../functions/http/limits.ts';
import { PROMOTION_SHARDS } from '../../functions/tables.ts';
import { DEFAULT_BACKOFF_MS, DEFAULT_MAX_FAILED_STARTS } from '../../local/dynamodb-supervisor.ts';
import { queues } from '../../functions/queues.ts';
import { workers } from '../../functions/workers.ts';
import { QUICK_RETRY_DELAYS_SECONDS } from '../../functions/runtime/message-worker.ts';
import { codeBlocks, parsePage } from '../../scripts/docs/walkthrough.ts';

/**
 * Figures the pages state about the template and the tables are derived, not typed: the
 * generated sections (routes, tables, outputs) are what `npm run docs -- --update` writes from
 * the route table, the table list and the synthesized template, and every count in prose
 * ("38 alarms", "the seven DynamoDB tables") is the template's.
 */
const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
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

  it("the outputs list holds every output of either template: the custom-domain ones, the table names and the stack's web ACL included", () => {
    const outputs = renderSections(plain, everything).outputs!;
    for (const name of Object.keys({ ...plain.Outputs, ...everything.Outputs })) expect(outputs).toContain(`\`${name}\``);
    expect(outputs).toContain('`TokenRateLimitWebAclArn`');
    for (const name of ['CoreBaseUrl', 'PosBaseUrl', 'CodesTableName', 'CoreDomainTarget', 'PosDomainTarget', 'DashboardName']) {
      expect(outputs).toContain(`\`${name}\``);
    }
    expect(outputs).toMatch(/`CoreApiEndpoint[0-9A-F]*`/);
  });
});

describe('the context options of the deploy page', () => {
  /** Every context key the stack reads (infra/config.ts), by reading a context that has none set. */
  const contextKeys = () => {
    const keys: string[] = [];
    readConfig({ tryGetContext: (key: string) => void keys.push(key) } as never);
    return [...new Set(keys)];
  };
  /** Rows of the pages' tables whose first cell names context options: names, and the second cell. */
  const optionRows = (page: string) =>
    read(page)
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split(' | '))
      .map((cells) => ({ names: [...cells[0]!.matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1]!), shown: cells[1]!.trim() }))
      .filter((row) => row.names.length > 0 && row.names.every((name) => contextKeys().includes(name)));

  it('docs/deploying.md lists every context option the stack reads', () => {
    const listed = optionRows('docs/deploying.md').flatMap((row) => row.names);
    expect(
      contextKeys().filter((key) => !listed.includes(key)),
      'options infra/config.ts reads that the table lacks',
    ).toEqual([]);
  });

  it.each(pages)('%s: a context option shown with a default shows the one infra/config.ts has', (page) => {
    for (const row of optionRows(page)) {
      for (const name of row.names) {
        if (!(name in defaults)) continue;
        expect(row.shown, `${page}: ${name}`).toBe(`\`${defaults[name as keyof typeof defaults]}\``);
      }
    }
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
    // A ```markdown block shows how to write a page; its console block is an example of the markup.
    const shown = codeBlocks(page, text).filter((block) => block.lang !== 'console' && block.lang !== 'markdown');
    const local = shown.filter((block) => block.lines.some((line) => /127\.0\.0\.1:300[01]|localhost:300[01]/.test(line)));
    expect(
      local.map((block) => `${page}:${block.start}`),
      'a command for the local stack belongs in a ```console block, with "$ " lines (docs/writing-docs.md)',
    ).toEqual([]);
    expect(() => parsePage(page, text)).not.toThrow();
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('links between the pages', () => {
  it.each(pages)('%s: every relative link reaches a file, and a heading where it names one', (page) => {
    const text = read(page);
    const broken: string[] = [];
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
      if (!existsSync(resolved)) {
        broken.push(`${target}: no file ${resolved}`);
        continue;
      }
      if (anchor === undefined || !resolved.endsWith('.md')) continue;
      const headings = [...read(resolved).matchAll(/^#{1,6} (.+)$/gm)].map((heading) => anchorOf(heading[1]!));
      if (!headings.includes(anchor)) broken.push(`${target}: no heading #${anchor} in ${resolved}`);
    }
    expect(broken).toEqual([]);
  });
});

describe('files the pages write', () => {
  it.each(pages)('%s: a file a command writes into the checkout (`> file`) is git-ignored, so following the page leaves no untracked file', (page) => {
    const written = codeBlocks(page, read(page))
      .filter((block) => block.lang === 'console' || block.lang === 'sh' || block.lang === 'yaml')
      .flatMap((block) => block.lines.flatMap((line) => [...line.matchAll(/(?<![0-9&=-])>\s*([A-Za-z0-9_.][A-Za-z0-9_./-]*)/g)].map((match) => match[1]!)))
      .filter((file) => !file.startsWith('/'));
    const kept = written.filter((file) => spawnSync('git', ['check-ignore', '-q', '--no-index', file]).status !== 0);
    expect(kept, 'add the file to .gitignore, or write it under reports/ or .local/').toEqual([]);
  });
});

describe('docs/api.md: statuses and message ids', () => {
  const api = () => read('docs/api.md');
  /** The first cells of the status table ("200 / 201", "409", …) as numbers. */
  const tableStatuses = () => {
    const section = api().split('## Status codes')[1]!.split('\n## ')[0]!;
    return section
      .split('\n')
      .filter((line) => /^\| \d{3}/.test(line))
      .flatMap((line) =>
        line
          .split(' | ')[0]!
          .replace('|', '')
          .split('/')
          .map((status) => Number(status.trim())),
      );
  };

  it("the status table has a row for every status the OpenAPI documents list, and the gateway's 405", () => {
    const documented = new Set<number>([METHOD_NOT_ALLOWED.statusCode]);
    for (const file of ['openapi/core.json', 'openapi/pos.json']) {
      const document = JSON.parse(read(file)) as { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> };
      for (const operations of Object.values(document.paths)) {
        for (const operation of Object.values(operations)) for (const status of Object.keys(operation.responses ?? {})) documented.add(Number(status));
      }
    }
    const shown = tableStatuses();
    expect([...documented].filter((status) => !shown.includes(status)).sort()).toEqual([]);
  });

  it('the 409 row names every cause the handlers throw (each `conflict(` of functions/)', () => {
    const row = api()
      .split('\n')
      .find((line) => line.startsWith('| 409 |'))!;
    // One phrase of the row per cause; a new conflict( in a handler needs its phrase here and there.
    const causes = [
      'Idempotency-Key',
      'inactive',
      'exhausting',
      'webhook endpoint limit',
      'retried on a `disabled` endpoint',
      'redemption or check refused',
      'issuance jobs running',
      'whole space of codes',
    ];
    for (const cause of causes) expect(row, cause).toContain(cause);
    const thrown = spawnSync('grep', ['-rhoE', "conflict\\((`|')[^`']{0,30}", 'functions'], { encoding: 'utf8' }).stdout.trim().split('\n');
    // Eight throws on one line, seven causes: "inactive" is thrown before and inside the issuing
    // transaction and the issuance job's (the job's "can make N distinct codes" is thrown on two lines).
    expect(thrown.length, `conflict( calls in functions/: ${thrown.join(' | ')}`).toBe(8);
  });

  it('the pos message_id list names every code the pos host can answer with', () => {
    // Typed by ErrorCode: a new code fails the type check until it is sorted here.
    const onPos = {
      bad_request: true,
      unauthorized: true,
      forbidden: true,
      site_not_allowed: true,
      not_found: true,
      conflict: false, // the pos routes take no Idempotency-Key; their 409s carry per-code message ids
      precondition_failed: false, // no If-Match on the pos host
      payload_too_large: true,
      unsupported_media_type: true,
      validation_failed: true,
      too_many_unknown_codes: true,
      service_unavailable: true,
      internal_error: true,
    } satisfies Record<ErrorCode, boolean>;
    const ids = [
      ...Object.entries(onPos)
        .filter(([, shown]) => shown)
        .map(([code]) => code),
      ...gatewayErrors.map((error) => error.messageId),
      METHOD_NOT_ALLOWED.messageId,
      TOKEN_RATE_LIMITED.messageId,
      SOURCE_RATE_LIMITED.messageId,
      HEADERS_TOO_LARGE.messageId,
    ];
    const paragraph = api().split('On the pos host every error carries')[1]!.split('\n\n')[0]!;
    expect(ids.filter((id) => !paragraph.includes(`\`${id}\``))).toEqual([]);
  });
});

/** The source files of a folder, recursively (robust to files moving inside it). */
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(path.join(dir, entry.name))
      : entry.name.endsWith('.ts') && !entry.name.endsWith('.generated.ts')
        ? [path.join(dir, entry.name)]
        : [],
  );

const ORDINALS = ['zeroth', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'];
/** The quick copies' delays as a page writes them: "2, 4, 8, then 16" with `, then `. */
const delays = (last: string) => `${QUICK_RETRY_DELAYS_SECONDS.slice(0, -1).join(', ')}${last}${QUICK_RETRY_DELAYS_SECONDS.at(-1)}`;
const receivesOf = (name: string) => {
  const trigger = workers.find((worker) => worker.name === name)!.trigger;
  return trigger.kind === 'queue' ? trigger.maxReceiveCount : 0;
};

describe('numbers the pages state about the system', () => {
  /** Each default the code reads a setting with: numberFromEnv('X', n) in functions/, port('X', n) in local/. */
  const codeDefaults = () => {
    const found = new Map<string, number>();
    for (const file of [...sources('functions'), ...sources('local')]) {
      for (const match of read(file).matchAll(/(?:numberFromEnv|port)\('([A-Z_]+)', ([\d_]+)\)/g)) found.set(match[1]!, Number(match[2]!.replace(/_/g, '')));
    }
    return found;
  };

  it('docs/operations.md: every numeric default of the settings tables is the one the code reads the setting with', () => {
    const defaultsInCode = codeDefaults();
    const checked: string[] = [];
    for (const line of read('docs/operations.md')
      .split('\n')
      .filter((row) => row.startsWith('| `'))) {
      const [names, shown] = line.split(' | ');
      const variables = [...names!.matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]!);
      const values = [...shown!.matchAll(/`(\d+)`/g)].map((match) => Number(match[1]));
      variables.forEach((variable, i) => {
        if (!defaultsInCode.has(variable) || values[i] === undefined) return;
        expect(values[i], `docs/operations.md: ${variable}`).toBe(defaultsInCode.get(variable));
        checked.push(variable);
      });
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'CORE_PORT',
        'POS_PORT',
        'DYNAMODB_PORT',
        'ID_BLOCK_SIZE',
        'EVENT_RETENTION_DAYS',
        'TOKEN_CACHE_SECONDS',
        'DYNAMODB_MAX_ATTEMPTS',
        'TIMEOUT_RESERVE_MS',
      ]),
    );
  });

  it.each([
    [
      'README.md',
      `(${DEFAULT_BACKOFF_MS[0]! / 1000} s, growing to at most ${DEFAULT_BACKOFF_MS.at(-1)! / 1000} s`,
      "the supervisor's back-off (DEFAULT_BACKOFF_MS)",
    ],
    [
      'README.md',
      `After ${['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'][DEFAULT_MAX_FAILED_STARTS]} failed starts`,
      'DEFAULT_MAX_FAILED_STARTS',
    ],
    ['README.md', `CORE_PORT\` (default ${codeDefaults().get('CORE_PORT')})`, 'local/settings.ts'],
    ['README.md', `\`DYNAMODB_PORT\`\n(default ${codeDefaults().get('DYNAMODB_PORT')})`, 'local/settings.ts'],
    ['docs/api.md', `of at most ${MAX_BODY_BYTES / 1024} KiB`, 'MAX_BODY_BYTES'],
    ['README.md', `one of its promotion's ${PROMOTION_SHARDS} shards`, 'PROMOTION_SHARDS'],
    ['docs/redemption.md', `each promotion has up to **${PROMOTION_SHARDS} shards**`, 'PROMOTION_SHARDS'],
    ['docs/api.md', `shards (up to ${PROMOTION_SHARDS}, table \`promotionShards\``, 'PROMOTION_SHARDS'],
    ['docs/api.md', `\`TIMEOUT_RESERVE_MS\` (${codeDefaults().get('TIMEOUT_RESERVE_MS')! / 1000} s)`, 'functions TIMEOUT_RESERVE_MS'],
    ['docs/api.md', `a call makes at most ${codeDefaults().get('DYNAMODB_MAX_ATTEMPTS')}\nattempts`, 'DYNAMODB_MAX_ATTEMPTS'],
    ['docs/api.md', `\`EVENT_RETENTION_DAYS\` (default ${codeDefaults().get('EVENT_RETENTION_DAYS')})`, 'EVENT_RETENTION_DAYS'],
    // The message workers' quick copies (functions/runtime/message-worker.ts) and the queues' own redelivery (functions/queues.ts).
    ['docs/api.md', `a copy of its message ${delays(', then ')} s later`, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/issuance-jobs.md', `a copy of itself ${delays(', then ')} s later`, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/operations.md', `a copy of itself ${delays(' or ')} s\nlater`, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/operations.md', `a copy of itself ${delays(' or ')} s later) and \`export_not_written\``, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/operations.md', `\`retry\` 0 to ${QUICK_RETRY_DELAYS_SECONDS.length - 1} where the check sent a copy`, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/operations.md', `\`receive_count\` on the ${ORDINALS[QUICK_RETRY_DELAYS_SECONDS.length + 1]} failure in a row`, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/security.md', `a copy of itself ${delays(' and ')} s later`, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/api.md', `queue's visibility (${queues.exports.visibilityTimeoutSeconds / 60} minutes)`, 'queues.exports'],
    ['docs/operations.md', `the queue's ${queues.exports.visibilityTimeoutSeconds / 60}-minute visibility`, 'queues.exports'],
    ['docs/operations.md', `after its ${queues.issuanceFinalisation.visibilityTimeoutSeconds / 60}-minute visibility`, 'queues.issuanceFinalisation'],
    ['docs/operations.md', `not the queue's ${queues.issuanceJobs.visibilityTimeoutSeconds / 60}-minute`, 'queues.issuanceJobs'],
    ['docs/issuance-jobs.md', `the queue's ${queues.issuanceJobs.visibilityTimeoutSeconds} s visibility`, 'queues.issuanceJobs'],
    [
      'docs/security.md',
      `(${[queues.issuanceJobs, queues.exports, queues.issuanceFinalisation]
        .map((queue) => queue.visibilityTimeoutSeconds / 60)
        .join(', ')
        .replace(/, (?=\d+$)/, ' or ')} minutes)`,
      'functions/queues.ts',
    ],
    ['docs/api.md', `its ${ORDINALS[receivesOf('writeExports')]} receive that fails marks the export \`failed\``, 'writeExports maxReceiveCount'],
    ['docs/decisions.md', `copies of the message (${QUICK_RETRY_DELAYS_SECONDS.join(', ')} s later`, 'QUICK_RETRY_DELAYS_SECONDS'],
    ['docs/decisions.md', `(the ${ORDINALS[receivesOf('writeExports')]} receive) marks the export \`failed\``, 'writeExports maxReceiveCount'],
  ])('%s states %j (%s)', (page, phrase) => {
    expect(read(page)).toContain(phrase);
  });
});

describe('loops on the pages', () => {
  it.each(pages)('%s: no unbounded wait: a shell loop is a bounded `for … in $(seq N)` that says what to do when it runs out', (page) => {
    const text = read(page);
    const blocks = codeBlocks(page, text).filter((block) => block.lang === 'console' || block.lang === 'sh');
    const unbounded = blocks.flatMap((block) =>
      block.lines.filter((line) => /\b(while|until)\b.*;\s*do\b/.test(line)).map((line) => `${page}:${block.start}: ${line.trim()}`),
    );
    expect(unbounded, 'docs/writing-docs.md: a loop that waits has a bound and a message').toEqual([]);
    for (const block of blocks) {
      const loops = block.lines
        .join('\n')
        .split(/(?=\bfor \w+ in \$\(seq )/)
        .slice(1);
      for (const loop of loops) expect(loop.split('done')[0], `${page}:${block.start}: the bounded loop says what to do when it runs out`).toMatch(/echo '/);
    }
  });
});
