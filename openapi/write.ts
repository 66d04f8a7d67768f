import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hosts, type HostId } from '../functions/routes.ts';
import { openApiDocument } from './document.ts';
import { clientTypes, clientTypesFile } from './client-types.ts';

/**
 * `npm run openapi`: writes openapi/core.json and openapi/pos.json (a test fails while they are
 * stale). The examples are real responses of the test suite: every `npm test` records the first
 * response it gets for each operation and status into reports/openapi-examples/, and
 * `npm run openapi -- --examples` takes those into openapi/examples.json, adding what is missing
 * (`--refresh-examples` replaces them all). Then the typed client's types, client/core.ts and
 * client/pos.ts, from the documents just written (openapi/client-types.ts).
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
  const document = openApiDocument(host, examples);
  writeFileSync(new URL(`./${host}.json`, import.meta.url), `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote openapi/${host}.json`);
  // From the text just written, as the staleness test reads it back (JSON drops what is undefined).
  writeFileSync(clientTypesFile(host), await clientTypes(JSON.parse(JSON.stringify(document))));
  console.log(`wrote client/${host}.ts`);
}
