import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces at their TypeScript positions, paid for only when a request fails.
 *
 * The functions run without `--enable-source-maps`: Node would parse every bundle's map at every
 * cold start (15–19 ms, docs/benchmarks.md, "Cold start"). The bundles keep their function names instead
 * (BUNDLING in infra/constructs/function-with-log-group.ts), and the map shipped beside the bundle
 * is read here the first time a 5xx is logged (40–80 ms for a 480 KiB map, once per execution
 * environment), so the logged frames also say which source file and line they came from.
 */
let loaded: SourceMap | null | undefined;

/** This bundle's file, when running from one (`index.mjs`); undefined under tsx or vitest. */
const bundleUrl = import.meta.url.endsWith('.mjs') ? import.meta.url : undefined;

function bundleMap(): SourceMap | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (!bundleUrl) return loaded;
  try {
    loaded = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(bundleUrl)}.map`, 'utf8')));
  } catch {
    // No map shipped (or unreadable): the frames keep the bundle's positions and names.
  }
  return loaded;
}

const FRAME = /(file:\/\/[^\s()]+?\.mjs):(\d+):(\d+)/g;

/**
 * `stack` with each frame of this bundle at its source position, as `--enable-source-maps` would
 * print it: `at findEvent (file:///var/task/index.mjs:3:1042)` becomes
 * `at findEvent (functions/data/events.ts:57:22)` (and Powertools' `location` with it).
 * Frames elsewhere, and every frame when no map is available, are left as they are.
 */
function withSourcePositions(stack: string): string {
  const map = bundleMap();
  if (!map) return stack;
  return stack.replace(FRAME, (frame, url: string, line: string, column: string) => {
    if (url !== bundleUrl) return frame;
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number };
    if (!entry.originalSource || entry.originalLine === undefined || entry.originalColumn === undefined) return frame;
    const source = entry.originalSource.replace(/^(?:\.\.\/)+/, '');
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}

/** The error as logged: the same error, its stack (and its causes') annotated with source positions. */
export function withOriginalStack<T>(error: T): T {
  if (!bundleUrl || !(error instanceof Error)) return error;
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++, current = current.cause) {
    if (typeof current.stack === 'string') current.stack = withSourcePositions(current.stack);
  }
  return error;
}
