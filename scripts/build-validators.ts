/**
 * `npm run schemas`: compiles the request schemas of functions/http/schemas.ts into ajv
 * standalone validators, one module per schema (functions/http/schemas/<name>.generated.ts),
 * so no function compiles a schema at cold start and each bundles only its own route's. A unit
 * test fails when a generated file is stale, missing or left over.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { GENERATED_DIR, generatedValidators } from './validators-source.ts';

const dir = resolve(import.meta.dirname, '..', GENERATED_DIR);
mkdirSync(dir, { recursive: true });
const files = generatedValidators();
for (const stale of readdirSync(dir).filter((file) => file.endsWith('.generated.ts') && !(file in files))) {
  rmSync(resolve(dir, stale));
  console.log(`removed ${GENERATED_DIR}/${stale}`);
}
for (const [file, source] of Object.entries(files)) writeFileSync(resolve(dir, file), source);
console.log(`wrote ${Object.keys(files).length} files to ${GENERATED_DIR}`);
