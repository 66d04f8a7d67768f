/**
 * `npm run schemas`: compiles the request schemas of functions/commons/schemas.ts into ajv
 * standalone validators (functions/commons/schemas/validators.generated.ts), so no function
 * compiles a schema at cold start. A unit test fails when the generated file is stale.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generatedValidators } from './validators-source.ts';

const target = resolve(import.meta.dirname, '../functions/commons/schemas/validators.generated.ts');
writeFileSync(target, generatedValidators());
console.log(`wrote ${target}`);
