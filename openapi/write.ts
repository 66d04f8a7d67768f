import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hosts, type HostId } from '../functions/routes.ts';
import { openApiDocument } from './document.ts';

/**
 * `npm run openapi`: writes openapi/core.json and openapi/pos.json (a test fails while they are
 * stale). The examples are real responses of the test suite: every `npm test` records the first
 * response it gets for each operation and status into reports/openapi-examples/, and
 * `npm run openapi -- --examples` takes those into openapi/examples.json, adding what is missing
 * (`--refresh-examples` replaces them all).
 */
const examplesFile = new URL('./examples.json', import.meta.url);
const recordings = new URL('../reports/openapi-examples/', import.meta.url);
const examples: Record<string, { value: unknown; summary?: string }> = existsSync(examplesFile) ? JSON.parse(readFileSync(examplesFile, 'utf8')) : {};

const refresh = process.argv.includes('--refresh-examples');
if (refresh || process.argv.includes('--examples')) {
  if (!existsSync(recordings)) throw new Error('No recordings in reports/openapi-examples/: run npm test first');
  const recorded: typeof examples = {};
  for (const file of readdirSync(recordings).sort()) {
    for (const [key, value] of Object.entries(JSON.parse(readFileSync(new URL(file, recordings), 'utf8')))) {
      recorded[key] ??= value as { value: unknown; summary?: string };
    }
  }
  for (const [key, value] of Object.entries(recorded)) if (refresh || !examples[key]) examples[key] = value;
  const sorted = Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(examplesFile, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`wrote openapi/examples.json (${Object.keys(sorted).length} examples)`);
}

for (const host of Object.keys(hosts) as HostId[]) {
  writeFileSync(new URL(`./${host}.json`, import.meta.url), `${JSON.stringify(openApiDocument(host, examples), null, 2)}\n`);
  console.log(`wrote openapi/${host}.json`);
}
