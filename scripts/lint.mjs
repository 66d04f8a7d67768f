#!/usr/bin/env node
// `npm run lint`: Biome (lint and format, biome.jsonc), dependency-cruiser (the layering of functions/,
// .dependency-cruiser.cjs) and knip (dead files, exports and dependencies, knip.config.ts), one after the
// other (two cores), each run even when one before it failed, so one run shows everything to fix.
// `npm run lint -- --fix` lets Biome apply its safe fixes and the formatting first; the layering and
// dead code are for a person to fix (knip's own `npx knip --fix` can drop unused exports and dependencies).
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const fix = process.argv.includes('--fix');
const unknown = process.argv.slice(2).filter((arg) => arg !== '--fix');
if (unknown.length > 0) {
  console.error(`lint: unknown argument ${unknown.join(' ')} (only --fix)`);
  process.exit(2);
}

const steps = [
  ['biome', ['check', '--error-on-warnings', ...(fix ? ['--write'] : []), '.']],
  ['depcruise', ['functions', 'infra', 'local', 'openapi', 'client', 'examples', 'scripts', 'test', 'vitest.config.ts', 'knip.config.ts']],
  ['knip', ['--no-progress']],
];

// node_modules/.bin first, as `npm run` puts it: the tools' `#!/usr/bin/env node` then finds the Node 24 installed
// there (dependency-cruiser refuses older ones) even when this file is started with `node scripts/lint.mjs`.
const bin = join(root, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
const failed = [];
for (const [tool, args] of steps) {
  const result = spawnSync(join(bin, tool), args, { cwd: root, stdio: 'inherit', env });
  if (result.status !== 0) failed.push(tool);
}
if (failed.length > 0) {
  console.error(
    `\nlint: ${failed.join(', ')} failed (see above).${failed.includes('biome') && !fix ? ' `npm run lint -- --fix` applies the safe fixes and the formatting.' : ''}`,
  );
  process.exit(1);
}
