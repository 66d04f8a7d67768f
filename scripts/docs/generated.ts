/**
 * Figures the documentation states about the route table, the table list and the synthesized
 * template, derived instead of typed:
 *
 * - Lists are generated between markers, and `npm run docs -- --update` rewrites them:
 *
 *     <!-- generated:routes -->
 *     …written by this file…
 *     <!-- /generated:routes -->
 *
 * - Counts in prose ("38 alarms", "the seven DynamoDB tables") are checked by
 *   test/docs/figures.test.ts against `COUNTED`.
 */
import { hosts, routes } from '../../functions/routes.ts';
import { tableIds, tables } from '../../functions/tables.ts';
import { EVENT_TYPES, type EventType } from '../../functions/data/event-types.ts';
import { codeBlocks } from './walkthrough.ts';

/** The parts of a CloudFormation template read here. */
export interface TemplateJson {
  readonly Resources: Record<string, { readonly Type: string }>;
  readonly Outputs?: Record<string, { readonly Description?: string }>;
}

function countResources(template: TemplateJson, type: string): number {
  return Object.values(template.Resources).filter((resource) => resource.Type === type).length;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

function routesSection(): string {
  const rows = routes.map(
    (route) => `| ${route.method} | \`${route.path}\` | ${route.host} | ${route.scope} | \`${route.operationId}\` | ${cell(route.summary)} |`,
  );
  return ['| method | path | host | token scope | operationId | what |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

function routeTablesSection(): string {
  const rows = routes.map((route) => {
    const touched = Object.entries(route.tables)
      .map(([id, access]) => `${id} (${access})`)
      .join(', ');
    return `| \`${route.operationId}\` | \`${route.entry}\` | ${touched} |`;
  });
  return ['| operation | handler | tables it may touch (IAM grant) |', '|---|---|---|', ...rows].join('\n');
}

function tablesSection(): string {
  const key = (attribute: { name: string; type: string }) => `\`${attribute.name}\` (${attribute.type})`;
  const rows = tableIds.map((id) => {
    const spec: (typeof tables)[typeof id] & { sortKey?: { name: string; type: string }; timeToLiveAttribute?: string; indexes?: readonly { name: string }[] } =
      tables[id];
    const other = [spec.timeToLiveAttribute ? `TTL \`${spec.timeToLiveAttribute}\`` : '', ...(spec.indexes ?? []).map((index) => `GSI \`${index.name}\``)]
      .filter(Boolean)
      .join(', ');
    return `| ${id} | \`${spec.envVar}\` | ${key(spec.partitionKey)} | ${spec.sortKey ? key(spec.sortKey) : ''} | ${other} | ${cell(spec.description)} |`;
  });
  return ['| table | environment variable | partition key | sort key | TTL, indexes | what it holds |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** Outputs that CDK adds for each RestApi, without a description of their own. */
const UNDESCRIBED: Record<string, string> = {
  CoreApiEndpoint: "API Gateway's own URL of the core stage, with a trailing slash (CDK adds it); `CoreBaseUrl` is the one to use",
  PosApiEndpoint: "API Gateway's own URL of the pos stage, with a trailing slash (CDK adds it); `PosBaseUrl` is the one to use",
};

/**
 * Every output of either template: one that an option adds shows only in `everything`, one that
 * an option removes (the stack's own web ACL, replaced by `webAclArn`) only in `plain`.
 *
 * @param plain the template of `cdk synth` with default context
 * @param everything the template with every optional feature on (custom domains, the logging role, an own web ACL)
 */
function outputsSection(plain: TemplateJson, everything: TemplateJson): string {
  const byDefault = plain.Outputs ?? {};
  const withOptions = everything.Outputs ?? {};
  const rows = Object.entries({ ...byDefault, ...withOptions }).map(([id, output]) => {
    const name = Object.keys(UNDESCRIBED).find((prefix) => id.startsWith(prefix));
    const what = output.Description ?? (name ? UNDESCRIBED[name] : undefined) ?? '';
    const when = id in byDefault ? (id in withOptions ? 'always' : 'by default; not when an option replaces it') : 'only when its option is given';
    // The endpoint outputs carry a hash suffix in their logical id; show it as CDK names it.
    return `| \`${id}\` | ${when} | ${cell(what)} |`;
  });
  return ['| output | present | what |', '|---|---|---|', ...rows].join('\n');
}

/**
 * What writes each event type, and its `resource_id`: typed by EventType, so a new type fails the
 * type check until it is described here, and then shows on the page.
 */
const EVENT_TYPE_ROWS: Record<EventType, { readonly when: string; readonly resource: string }> = {
  'code_generator.created': { when: '`POST /v1.0/codegen` created a generator', resource: 'the generator id' },
  'code_generator.updated': { when: '`PATCH /v1.0/codegen/{id}` changed a value', resource: 'the generator id' },
  'codes.issued': { when: '`POST /v1.0/codegen/{id}/codes` issued codes (one event per call)', resource: 'the generator id' },
  'transaction.voided': { when: '`POST /v2.0/voided_transactions` voided a transaction', resource: '`site_id/pos_transaction_id`' },
  'codes.redeemed': { when: '`POST /v2.0/redeemed_codes` redeemed codes', resource: '`site_id/pos_transaction_id`' },
  'codes.released': { when: 'a void released the codes its transaction held', resource: '`site_id/pos_transaction_id`' },
  'export.completed': { when: 'an export of `POST /v1.0/codegen/{id}/exports` was written to S3', resource: 'the export id' },
};

function eventTypesSection(): string {
  const rows = EVENT_TYPES.map((type) => `| \`${type}\` | ${EVENT_TYPE_ROWS[type].when} | ${EVENT_TYPE_ROWS[type].resource} |`);
  return ['| event type | written when | `resource_id` |', '|---|---|---|', ...rows].join('\n');
}

/** Every generated section, by marker name. */
export function renderSections(plain: TemplateJson, everything: TemplateJson): Record<string, string> {
  return {
    routes: routesSection(),
    'route-tables': routeTablesSection(),
    tables: tablesSection(),
    outputs: outputsSection(plain, everything),
    'event-types': eventTypesSection(),
  };
}

/** Counts the pages state in prose, with where each comes from. */
export function counted(plain: TemplateJson) {
  return {
    alarms: { value: countResources(plain, 'AWS::CloudWatch::Alarm'), from: 'AWS::CloudWatch::Alarm resources of the synthesized template' },
    tables: { value: countResources(plain, 'AWS::DynamoDB::Table'), from: 'AWS::DynamoDB::Table resources of the synthesized template' },
    hosts: { value: Object.keys(hosts).length, from: 'functions/routes.ts hosts' },
  };
}

const MARKER = /(<!-- generated:([a-z-]+)[^>]*-->\n)([\s\S]*?)(<!-- \/generated:\2 -->)/g;

/** Whether the character at `offset` is inside a fenced code block (an example of a marker, say). */
function inCode(page: string, text: string, offset: number): boolean {
  const line = text.slice(0, offset).split('\n').length - 1;
  return codeBlocks(page, text).some((block) => line >= block.start && line < block.start + block.lines.length);
}

/** The page with every generated section rewritten; unknown section names are an error. */
export function fillSections(page: string, text: string, sections: Record<string, string>): string {
  return text.replace(MARKER, (whole: string, open: string, name: string, _body: string, close: string, offset: number) => {
    if (inCode(page, text, offset)) return whole;
    const body = sections[name];
    if (body === undefined) throw new Error(`${page}: unknown generated section "${name}" (known: ${Object.keys(sections).join(', ')})`);
    return `${open}${body}\n${close}`;
  });
}

/** The names of the generated sections a page holds. */
export function sectionNames(page: string, text: string): string[] {
  return [...text.matchAll(MARKER)].filter((match) => !inCode(page, text, match.index)).map((match) => match[2]!);
}

const WORDS = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** "38", "seven", "thirty-eight" → the number; anything else → undefined. */
export function numberIn(text: string): number | undefined {
  const word = text.toLowerCase();
  if (/^\d+$/.test(word)) return Number(word);
  const small = WORDS.indexOf(word);
  if (small >= 0) return small;
  const [tens, ones] = word.split('-');
  const t = TENS.indexOf(tens ?? '');
  if (t >= 2) {
    if (ones === undefined) return t * 10;
    const o = WORDS.indexOf(ones);
    if (o >= 1 && o <= 9) return t * 10 + o;
  }
  return undefined;
}

/** Every "N alarms" / "N DynamoDB tables" of a page whose N is a number, with its line. */
export function statedCounts(text: string): { what: 'alarms' | 'tables'; stated: number; line: number; phrase: string }[] {
  const found: { what: 'alarms' | 'tables'; stated: number; line: number; phrase: string }[] = [];
  const patterns = [
    { what: 'alarms' as const, pattern: /\b([\w-]+) alarms\b/g },
    { what: 'tables' as const, pattern: /\b([\w-]+) DynamoDB tables\b/g },
  ];
  text.split('\n').forEach((line, index) => {
    for (const { what, pattern } of patterns) {
      for (const match of line.matchAll(pattern)) {
        const stated = numberIn(match[1]!);
        if (stated !== undefined) found.push({ what, stated, line: index + 1, phrase: match[0] });
      }
    }
  });
  return found;
}
