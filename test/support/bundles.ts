import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findBundles } from '../../infra/bundles.ts';

/**
 * The bundles `cdk synth` built into cdk.out, for the `e2e` project (TILLGATE_HANDLERS=bundles).
 * Refused when a file under functions/ is newer than the cloud assembly: the run would test the
 * code as it was at the last synth, not as it is. `npm test` synthesizes before it runs.
 */
export function freshBundles(): Record<string, string> {
  const manifest = resolve('cdk.out', 'manifest.json');
  const bundles = findBundles(resolve('cdk.out'));
  const built = statSync(manifest).mtimeMs;
  const newer = newestFile(resolve('functions'));
  if (newer && newer.mtimeMs > built) {
    throw new Error(
      `The bundles in cdk.out are older than ${newer.path}: run \`npx cdk synth --quiet\` first (npm test does), ` +
        'or TILLGATE_HANDLERS=source to run the end-to-end files on the TypeScript sources.',
    );
  }
  return bundles;
}

function newestFile(dir: string): { path: string; mtimeMs: number } | undefined {
  let newest: { path: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const candidate = entry.isDirectory() ? newestFile(path) : { path, mtimeMs: statSync(path).mtimeMs };
    if (candidate && (!newest || candidate.mtimeMs > newest.mtimeMs)) newest = candidate;
  }
  return newest;
}
