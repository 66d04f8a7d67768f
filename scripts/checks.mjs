#!/usr/bin/env node
// `npm test`'s checks before vitest, side by side: `tsc --noEmit`, `npm run lint` (scripts/lint.mjs) and
// `cdk synth --quiet` (offline, with cdk-nag; it builds the bundles the `e2e` project serves). Each
// runs to its end even when another fails; their output is printed whole, one after the other, as
// each ends, and the exit status names every check that failed. Side by side because the synth is
// mostly one esbuild after another on one core: on two cores the three take the synth's time.
import { spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';

const root = join(import.meta.dirname, '..');
const bin = join(root, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };

const checks = [
  ['tsc --noEmit', join(bin, 'tsc'), ['--noEmit']],
  ['lint', process.execPath, [join(root, 'scripts', 'lint.mjs')]],
  ['cdk synth --quiet', join(bin, 'cdk'), ['synth', '--quiet']],
];

const started = Date.now();
const results = await Promise.all(
  checks.map(
    ([name, command, args]) =>
      new Promise((resolve) => {
        const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
        child.on('error', (error) => output.push(Buffer.from(`${error.message}\n`)));
        child.on('close', (code, signal) => {
          const text = Buffer.concat(output).toString('utf8');
          const seconds = ((Date.now() - started) / 1000).toFixed(1);
          const ok = code === 0;
          process.stdout.write(`\n${ok ? '✓' : '✗'} ${name} (${seconds} s${ok ? '' : `, ${signal ?? `exit ${code}`}`})\n${text}`);
          resolve({ name, ok });
        });
      }),
  ),
);
const failed = results.filter((result) => !result.ok).map((result) => result.name);
if (failed.length > 0) {
  console.error(`\nchecks: ${failed.join(', ')} failed (output above)`);
  process.exit(1);
}
