/**
 * The documentation's shell examples, run as written against a fresh local stack.
 *
 * The convention (docs/writing-docs.md says the same for writers):
 *
 *   ```console
 *   $ curl -s -w ' %{http_code}\n' http://127.0.0.1:3000/v1.0/events -H "X-Auth-Token: $TOKEN"
 *   {"events":[],"next_cursor":null} 200
 *   ```
 *
 * - Only ```console blocks run. In them a line starting with `$ ` is a command; a command line
 *   ending with `\` continues on the next line; every other line is the output the command
 *   prints (stdout and stderr as a terminal shows them), up to the next `$ ` line or the fence.
 *   A command that prints nothing has no output lines. ```sh blocks are shown, never run: keep
 *   them for what cannot run here (npm start itself, AWS).
 * - Each page runs on its own fresh stack (`local/start.ts`, the `npm start` entry, in a
 *   temporary directory holding links to the repository, so `.local/` is new), in one bash
 *   session from its first command to its last: variables set by a command (`TOKEN`, `ETAG`,
 *   `CODE`, …) are there for the next ones. Every command must exit 0.
 * - The stack's ports are free ones, not 3000, 3001, 8000 and 4568, so a developer's own `npm start`
 *   and other test files never collide with it: `127.0.0.1:3000` (3001, 8000) in a command is
 *   rewritten to the real port before it runs, and back in its output.
 * - Outputs are compared line by line after normalising what varies from run to run (`RULES`
 *   below: request ids, times, moments in words, ETags, X-Runtime, Date, tokens, key ids, codes,
 *   list cursors).
 *   Ids are not normalised: on a fresh stack they are the same on every run, which is what lets a
 *   page use `/v1.0/codegen/1` literally.
 * - A block opened with ```console slow runs only with TILLGATE_DOCS_SLOW=1 (`npm run docs` by
 *   hand), each of its commands with up to an hour: for what takes minutes on a small machine (the
 *   README's job of 100,000 codes). Without it its examples are reported as not run, and no later
 *   example may depend on them (the test checks that the README has only the one such block).
 * - `npm run docs -- --update` rewrites the outputs of the examples that differ with what the
 *   run printed (values the page already shows elsewhere keep the page's spelling, so the diff
 *   shows only what changed); a new example needs only its `$ ` line.
 *
 * Why not a tool from npm: txm runs each block in its own process (no shared variables) and
 * compares bytes exactly (no normalising, no update); markdown-doctest runs JavaScript; runme
 * downloads a binary; cram and prysk are Python. What is needed here (one shell session per
 * page, a stack per page, normalised comparison, an update mode, vitest) is this file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../local/dynamodb.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** The ports the pages show, and the placeholders of the runner's free ports. */
const SHOWN_PORTS = { core: 3000, pos: 3001, dynamodb: 8000, s3: 4568 } as const;
type Ports = Record<keyof typeof SHOWN_PORTS, number>;

export interface Example {
  readonly page: string;
  /** 1-based line of the `$ ` line in the page. */
  readonly line: number;
  /** In a ```console slow block: run only with TILLGATE_DOCS_SLOW=1. */
  readonly slow: boolean;
  /** The command as shown, without the `$ ` prompt (continuation lines included). */
  readonly command: string;
  readonly expected: readonly string[];
  /** 0-based index of the first output line in the page, and how many there are. */
  readonly outputStart: number;
  readonly outputLength: number;
}

export interface CodeBlock {
  /** The info string after the opening fence (`console`, `sh`, `json`, or empty). */
  readonly lang: string;
  /** The words of the info string after the language (`slow` in ```console slow). */
  readonly attributes: readonly string[];
  /** 0-based index of the block's first line inside the fences. */
  readonly start: number;
  readonly lines: readonly string[];
}

/** The fenced code blocks of a Markdown page. */
export function codeBlocks(page: string, text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { fence: string; lang: string; attributes: string[]; start: number; lines: string[] } | undefined;
  text.split('\n').forEach((line, index) => {
    if (!open) {
      const opening = /^\s{0,3}(`{3,}|~{3,})\s*(\S*)(.*)$/.exec(line);
      if (opening) open = { fence: opening[1]!, lang: opening[2]!, attributes: opening[3]!.trim().split(/\s+/).filter(Boolean), start: index + 1, lines: [] };
    } else if (line.trim() === open.fence) {
      blocks.push({ lang: open.lang, attributes: open.attributes, start: open.start, lines: open.lines });
      open = undefined;
    } else {
      open.lines.push(line);
    }
  });
  if (open) throw new Error(`${page}:${open.start}: a code block is not closed`);
  return blocks;
}

/** The ```console blocks of a page, split into commands and their outputs. */
export function parsePage(page: string, text: string): Example[] {
  const examples: Example[] = [];
  for (const block of codeBlocks(page, text).filter((candidate) => candidate.lang === 'console')) {
    let current: { line: number; command: string[]; expected: string[]; outputStart: number; continues: boolean } | undefined;
    const close = () => {
      if (current) {
        examples.push({
          page,
          line: current.line,
          slow: block.attributes.includes('slow'),
          command: current.command.join('\n'),
          expected: current.expected,
          outputStart: current.outputStart,
          outputLength: current.expected.length,
        });
      }
      current = undefined;
    };
    block.lines.forEach((line, offset) => {
      const index = block.start + offset;
      if (current?.continues) {
        current.command.push(line);
        current.continues = line.endsWith('\\');
        current.outputStart = index + 1;
      } else if (line.startsWith('$ ')) {
        close();
        current = { line: index + 1, command: [line.slice(2)], expected: [], outputStart: index + 1, continues: line.endsWith('\\') };
      } else if (current) {
        current.expected.push(line);
      } else {
        throw new Error(`${page}:${index + 1}: a console block must start with a "$ " command line, found: ${line}`);
      }
    });
    close();
  }
  return examples;
}

/**
 * What varies from run to run, in the order it is replaced. Each rule replaces a match with its
 * placeholder, in the page's output and in the real one alike, before they are compared.
 */
const RULES: readonly { readonly name: string; readonly pattern: RegExp; readonly placeholder: string }[] = [
  { name: 'Date header', pattern: /(?<=^Date: ).*$/gm, placeholder: '<date>' },
  { name: 'X-Runtime header', pattern: /(?<=^X-Runtime: )[0-9.]+$/gm, placeholder: '<seconds>' },
  { name: 'request id', pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, placeholder: '<uuid>' },
  { name: 'time', pattern: /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g, placeholder: '<time>' },
  // A moment in words, as a cashier text says it (`expired on 26 November 2026 01:30:12 UTC`:
  // formatMoment of functions/redemption/terms.ts, seconds only when it has them).
  {
    name: 'moment in words',
    pattern: /\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|November|December) \d{4} \d\d:\d\d(?::\d\d)? UTC\b/g,
    placeholder: '<moment>',
  },
  // The hash only: a code generator's tag goes on with its times_redeemed (`W/"<hash>.3"`), compared as shown.
  { name: 'ETag', pattern: /W\/"[0-9a-f]{32}(?=(?:\.\d+)?")/g, placeholder: 'W/"<etag>' },
  // A running issuance job's progress (the README's job of 100,000 codes, read while it runs).
  { name: 'job progress', pattern: /(?<="issued":)\d+(?=,"status":"running")/g, placeholder: '<n>' },
  { name: 'token', pattern: /\btg_[A-Za-z0-9_-]{43}\b/g, placeholder: '<token>' },
  { name: 'key id', pattern: /\bkey_[0-9a-f]{16}\b/g, placeholder: '<key-id>' },
  // A list cursor is encrypted with each stack's own cursor key (functions/http/pagination.ts).
  { name: 'list cursor', pattern: /(?<="next_cursor":")[A-Za-z0-9_-]+(?=")/g, placeholder: '<cursor>' },
  // A webhook endpoint's signing secret: whsec_ and base64 of random bytes (functions/webhooks/rules.ts).
  { name: 'webhook secret', pattern: /\bwhsec_[A-Za-z0-9+/]+={0,2}/g, placeholder: 'whsec_<secret>' },
  // A tillgate code: a prefix ending in "-", then 8 of the alphabet of functions/codes/code-shapes.ts.
  { name: 'code', pattern: /\b[A-Z0-9]+-[2-9A-HJ-NP-Z]{8}\b/g, placeholder: '<code>' },
  // npm run smoke (docs/smoke.md): a request's latency (right-aligned, so its padding varies with
  // it), the run's id and its duration, as lines and as --json.
  // A check that polls a worker's result (an export, an issuance job) notes how many tries it took,
  // only when more than one: how long the worker took, which varies with the machine.
  { name: 'smoke poll tries', pattern: / \(\d+ tries\)|, \d+ tries(?=\))/g, placeholder: '' },
  { name: 'smoke latency', pattern: / +\d+ ms\b/g, placeholder: ' <n> ms' },
  { name: 'smoke run id', pattern: /(?<=smoke run |"run_id": ")[0-9a-f]{8}\b/g, placeholder: '<run-id>' },
  { name: 'smoke duration', pattern: /(?<=\bin )\d+\.\d s\b/g, placeholder: '<n> s' },
  { name: 'smoke JSON latency', pattern: /(?<="(?:latency|duration)_ms": )[\d.]+/g, placeholder: '<n>' },
];

/** The text with every varying part replaced, and the parts replaced, in order. */
export function normalise(text: string): { text: string; values: string[] } {
  const values: string[] = [];
  let result = text;
  for (const rule of RULES) {
    result = result.replace(rule.pattern, (match) => {
      values.push(match);
      return rule.placeholder;
    });
  }
  return { text: result, values };
}

/**
 * Every port of `from` replaced by its counterpart in `to`, in one pass: replacing them one after
 * the other would turn a free port that happens to be a shown one (a core stack on 3001) into the
 * next port's replacement too.
 */
export function substitutePorts(text: string, from: Ports, to: Ports): string {
  const keys = Object.keys(from) as (keyof Ports)[];
  const byPort = new Map(keys.map((key) => [String(from[key]), to[key]]));
  const ports = keys.map((key) => from[key]).join('|');
  return text.replace(new RegExp(`(127\\.0\\.0\\.1|localhost):(${ports})\\b`, 'g'), (_match, host: string, port: string) => `${host}:${byPort.get(port)}`);
}

/** A directory that looks like the repository (links to its files) but has its own `.local/`. */
function scratchCheckout(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tillgate-docs-'));
  for (const entry of readdirSync(ROOT)) {
    if (entry === '.local' || entry === '.git') continue;
    symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  }
  return dir;
}

/** The environment of a developer's terminal: no test settings, no AWS, the free ports. */
function terminalEnvironment(ports: Ports): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'JAVA_HOME'];
  const env: NodeJS.ProcessEnv = {};
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  env.LANG ??= 'C.UTF-8';
  return { ...env, CORE_PORT: String(ports.core), POS_PORT: String(ports.pos), DYNAMODB_PORT: String(ports.dynamodb), S3_PORT: String(ports.s3) };
}

export interface Stack {
  readonly dir: string;
  readonly ports: Ports;
  readonly env: NodeJS.ProcessEnv;
  /** What local/start.ts printed so far (banner and request log lines). */
  log(): string;
  stop(): Promise<void>;
}

async function distinctFreePorts(): Promise<Ports> {
  const taken = new Set<number>();
  const next = async () => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  return { core: await next(), pos: await next(), dynamodb: await next(), s3: await next() };
}

/**
 * The scratch checkout shares node_modules with the repository, and `npm run …` in it runs
 * preflight: were the install not stamped current, preflight would run `npm ci` there, through
 * the link. So the install must be current before anything runs (`npm test` sees to that).
 */
function assertInstalled() {
  const lock = createHash('sha256')
    .update(readFileSync(path.join(ROOT, 'package-lock.json')))
    .digest('hex');
  const stamp = path.join(ROOT, 'node_modules', '.tillgate-lock-sha256');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== lock) {
    throw new Error('node_modules is not the locked install preflight stamps: run `node scripts/preflight.mjs test` (or `npm test`) first.');
  }
}

/**
 * `npm start`'s entry, local/start.ts, in a scratch checkout on free ports. A port found free can
 * be taken by another process before the stack listens on it (a CI run: `Port 33867 is already in
 * use`, a test file's server on an ephemeral port in between): the stack is then started again on
 * other ports, up to 3 times.
 */
export async function startStack(timeoutMs = 90_000): Promise<Stack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startStackOnce(timeoutMs);
    } catch (error) {
      if (attempt >= 3 || !/is already in use/.test(String(error))) throw error;
    }
  }
}

async function startStackOnce(timeoutMs: number): Promise<Stack> {
  assertInstalled();
  const dir = scratchCheckout();
  const ports = await distinctFreePorts();
  const env = terminalEnvironment(ports);
  const child: ChildProcess = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['local/start.ts'], {
    cwd: dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // local/start.ts stops DynamoDB Local on SIGTERM; the group signal reaches tsx's child too.
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }, 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const started = Date.now();
  while (!output.includes('Ctrl-C stops everything')) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`local/start.ts exited before it was ready:\n${output}`);
    }
    if (Date.now() - started > timeoutMs) {
      await stop();
      throw new Error(`local/start.ts was not ready after ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return { dir, ports, env, log: () => output, stop };
}

/** The suggested first request of the start banner, with the stack's real ports. */
export function bannerCommands(log: string): string[] {
  const after = log.split('Use it with:\n')[1] ?? '';
  return after
    .split('\n')
    .map((line) => line.trim())
    .filter((line, index, all) => line !== '' && all.slice(0, index).every((earlier) => earlier !== ''));
}

const MARK = '\x1e';

export const COMMAND_TIMEOUT_MS = 120_000;
/** A command of a ```console slow block: the README's job of 100,000 codes took 26 minutes with `npm start` on a loaded machine. */
const SLOW_COMMAND_TIMEOUT_MS = 3_600_000;
/** Whether ```console slow blocks run (TILLGATE_DOCS_SLOW=1). */
const runsSlowExamples = () => process.env.TILLGATE_DOCS_SLOW === '1';

/** One bash session; `run` sends a command and returns what it printed and its exit status. */
export class Session {
  private readonly bash: ChildProcess;
  private buffer = '';
  private waiting?: () => void;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    // Its own process group, so that closing the session also ends what a command left running.
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const take = (chunk: Buffer) => {
      this.buffer += chunk.toString('utf8');
      this.waiting?.();
    };
    this.bash.stdout!.on('data', take);
    this.bash.stderr!.on('data', take);
    this.bash.stdin!.write('exec 2>&1\n');
  }

  /**
   * A command that has not finished after `timeoutMs` is reported as such; what it prints later
   * would land in the next command's output, so the page stops there (runPage). Two minutes: a
   * smoke run of 30 requests took over 20 s on a loaded two-core machine.
   */
  async run(command: string, timeoutMs = COMMAND_TIMEOUT_MS): Promise<{ output: string; status: number | 'timeout' }> {
    this.buffer = '';
    this.bash.stdin!.write(`${command}\n__status=$?; printf '\\n${MARK}%s${MARK}\\n' "$__status"\n`);
    const end = new RegExp(`\\n${MARK}(\\d+)${MARK}\\n$`);
    const started = Date.now();
    for (;;) {
      const match = end.exec(this.buffer);
      if (match) {
        const output = this.buffer.slice(0, match.index).replace(/\r\n/g, '\n').replace(/\n$/, '');
        return { output, status: Number(match[1]) };
      }
      if (Date.now() - started > timeoutMs) return { output: this.buffer, status: 'timeout' };
      await new Promise<void>((done) => {
        const timer = setTimeout(done, 200);
        this.waiting = () => {
          clearTimeout(timer);
          done();
        };
      });
    }
  }

  close() {
    this.bash.stdin!.end();
    try {
      process.kill(-this.bash.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

export interface Outcome {
  readonly example: Example;
  readonly index: number;
  readonly actual: readonly string[];
  readonly status: number | 'timeout';
  readonly matches: boolean;
  /** A slow example not run (no TILLGATE_DOCS_SLOW): counted as matching, its output kept. */
  readonly skipped?: boolean;
}

export interface PageResult {
  readonly page: string;
  readonly outcomes: readonly Outcome[];
  /** The page with the differing outputs replaced (update mode). */
  readonly updated: string;
}

function lines(text: string): string[] {
  return text === '' ? [] : text.split('\n');
}

/**
 * A reader's pace: after a command that leaves a process running (`… &`: the README's webhook
 * receiver), the next command comes this much later, longer than any default time-out such a
 * process might have (the receiver once quit after 30 s). Only pages with a background command
 * wait, once per such command. TILLGATE_DOCS_PACE_MS sets it (0: no pause).
 */
export const PACE_MS = Number(process.env.TILLGATE_DOCS_PACE_MS ?? 35_000);

/** A command that leaves a process running in the background: it ends with a lone `&`. */
export const leavesRunning = (command: string) => /(?<!&)&\s*$/.test(command);

/** Runs every example of one page, in order, in one session on a fresh stack. */
export async function runPage(page: string, options: { stack?: Stack; paceMs?: number } = {}): Promise<PageResult> {
  const paceMs = options.paceMs ?? PACE_MS;
  const text = readFileSync(path.join(ROOT, page), 'utf8');
  const examples = parsePage(page, text);
  const stack = options.stack ?? (await startStack());
  const session = new Session(stack.dir, stack.env);
  const outcomes: Outcome[] = [];
  try {
    for (const [index, example] of examples.entries()) {
      if (example.slow && !runsSlowExamples()) {
        outcomes.push({ example, index, actual: example.expected, status: 0, matches: true, skipped: true });
        continue;
      }
      if (index > 0 && leavesRunning(examples[index - 1]!.command) && paceMs > 0) await new Promise((done) => setTimeout(done, paceMs));
      const result = await session.run(substitutePorts(example.command, SHOWN_PORTS, stack.ports), example.slow ? SLOW_COMMAND_TIMEOUT_MS : COMMAND_TIMEOUT_MS);
      const actual = lines(substitutePorts(result.output, stack.ports, SHOWN_PORTS));
      const matches = result.status === 0 && normalise(actual.join('\n')).text === normalise(example.expected.join('\n')).text;
      outcomes.push({ example, index, actual, status: result.status, matches });
      // The session is out of step with the page: later outputs would be this command's.
      if (result.status === 'timeout') break;
    }
  } finally {
    session.close();
    if (!options.stack) await stack.stop();
  }
  return { page, outcomes, updated: rewrite(text, outcomes) };
}

/**
 * The page with each differing output replaced by the real one. A varying value (a time, a
 * code, …) that a matching example also shows keeps the page's spelling there, so the page
 * stays consistent and its diff shows only what changed.
 */
export function rewrite(text: string, outcomes: readonly Outcome[]): string {
  const known = new Map<string, string>();
  for (const outcome of outcomes) {
    if (!outcome.matches) continue;
    const shown = normalise(outcome.example.expected.join('\n')).values;
    normalise(outcome.actual.join('\n')).values.forEach((value, i) => known.set(value, shown[i]!));
  }
  const pageLines = text.split('\n');
  for (const outcome of [...outcomes].reverse()) {
    if (outcome.matches || outcome.status !== 0) continue;
    const { expected, actual } = { expected: outcome.example.expected, actual: outcome.actual };
    const matched = alignLines(
      expected.map((line) => normalise(line).text),
      actual.map((line) => normalise(line).text),
    );
    const replaced = actual.map((line, j) => {
      // A line that only differs in varying parts stays as the page has it.
      if (matched[j] !== undefined) return expected[matched[j]]!;
      let result = line;
      for (const rule of RULES) result = result.replace(rule.pattern, (value) => known.get(value) ?? value);
      return result;
    });
    pageLines.splice(outcome.example.outputStart, expected.length, ...replaced);
  }
  return pageLines.join('\n');
}

type Step = { readonly kind: 'same' | 'page' | 'run'; readonly i: number; readonly j: number };

/** The longest common subsequence of two lists of lines, as steps through both. */
function lcsSteps(expected: readonly string[], actual: readonly string[]): Step[] {
  const n = expected.length;
  const m = actual.length;
  const table = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i]![j] = expected[i] === actual[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    }
  }
  const steps: Step[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && expected[i] === actual[j]) steps.push({ kind: 'same', i: i++, j: j++ });
    else if (i < n && (j === m || table[i + 1]![j]! >= table[i]![j + 1]!)) steps.push({ kind: 'page', i: i++, j });
    else steps.push({ kind: 'run', i, j: j++ });
  }
  return steps;
}

/** For each line of the run, the index of the page's line it matches, if any. */
function alignLines(expected: readonly string[], actual: readonly string[]): (number | undefined)[] {
  const matched: (number | undefined)[] = new Array(actual.length).fill(undefined);
  for (const step of lcsSteps(expected, actual)) if (step.kind === 'same') matched[step.j] = step.i;
  return matched;
}

/** A line diff: `  ` same, `- ` only on the page, `+ ` only in the run. */
export function diffLines(expected: readonly string[], actual: readonly string[]): string[] {
  return lcsSteps(expected, actual).map((step) =>
    step.kind === 'same' ? `  ${expected[step.i]}` : step.kind === 'page' ? `- ${expected[step.i]}` : `+ ${actual[step.j]}`,
  );
}

/** A failure report a reader can act on: which example, what differs, and how to decide. */
export function describeFailures(result: PageResult): string {
  const failed = result.outcomes.filter((outcome) => !outcome.matches);
  if (failed.length === 0) return '';
  const total = result.outcomes.length;
  const parts = failed.map((outcome, n) => {
    const { example } = outcome;
    const where = `${example.page}:${example.line}: example ${outcome.index + 1} of ${total}`;
    const shown = `$ ${example.command}`;
    if (outcome.status !== 0) {
      return [
        `${where}: the command ${outcome.status === 'timeout' ? 'did not finish' : `exited with status ${outcome.status}`}.`,
        shown,
        'It printed:',
        ...outcome.actual.map((line) => `  ${line}`),
        'A command that fails is most likely wrong on the page (a typo, a variable no earlier example sets); ' +
          'if it ran before, a change in the code or a tool broke it.',
      ].join('\n');
    }
    const diff = diffLines(lines(normalise(example.expected.join('\n')).text), lines(normalise(outcome.actual.join('\n')).text));
    return [
      `${where}: the output differs from the page${n > 0 ? ' (it may follow from an earlier difference)' : ''}.`,
      shown,
      '--- the page (- lines), +++ this run (+ lines), varying parts normalised:',
      ...diff,
    ].join('\n');
  });
  return [
    ...parts,
    'Which one is wrong? If the code changed on purpose (a new header, field or message), the page is out of date: ' +
      `run \`npm run docs -- --update ${result.page}\`, read the diff of the page and commit it. ` +
      'If nobody meant to change that answer, the page is right and the code broke what it documents: fix the code.' +
      changedHint(result.page),
  ].join('\n\n');
}

/** What the work tree says about who changed: the page, the code, or both (nothing in a clean clone). */
function changedHint(page: string): string {
  const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
  if (status.status !== 0) return '';
  const changed = status.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  const pageChanged = changed.includes(page);
  const codeChanged = changed.filter((file) => /^(functions|local|infra|scripts|openapi)\//.test(file) && !file.startsWith('scripts/docs/'));
  if (pageChanged && codeChanged.length === 0) return `\nHere ${page} has uncommitted changes and the code has none: most likely the page.`;
  if (!pageChanged && codeChanged.length > 0) {
    return `\nHere the code has uncommitted changes (${codeChanged.slice(0, 3).join(', ')}${codeChanged.length > 3 ? ', …' : ''}) and ${page} has none: the code changed what the page shows.`;
  }
  return '';
}

/** Every page whose examples the walkthrough runs: the README and the docs/ pages with a console block. */
export function runnablePages(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].filter((page) => parsePage(page, readFileSync(path.join(ROOT, page), 'utf8')).length > 0);
}

export function writePage(page: string, text: string) {
  writeFileSync(path.join(ROOT, page), text);
}
