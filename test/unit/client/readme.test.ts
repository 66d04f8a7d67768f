import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The README shows the typed client in a few lines: the same lines as examples/readme.ts, which tsc compiles. */
describe("the README's typed client example", () => {
  it('is examples/readme.ts line for line (edit both, or neither)', () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('## A typed client'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block, 'a ```ts block under "## A typed client"').toBeDefined();
    const example = readFileSync('examples/readme.ts', 'utf8');
    const body = /\/\/ README begin\n([\s\S]*?)\n\s*\/\/ README end/.exec(example)?.[1];
    const dedented = body!.split('\n').map((line) => line.replace(/^ {2}/, ''));
    expect(block!.trimEnd().split('\n')).toEqual([`import { createTillgate } from './client/index.ts';`, '', ...dedented]);
  });
});
