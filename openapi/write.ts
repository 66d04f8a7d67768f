import { writeFileSync } from 'node:fs';
import { openApiDocument } from './document.ts';

// `npm run openapi`: regenerates openapi/openapi.json (a test fails while it is stale).
writeFileSync(new URL('./openapi.json', import.meta.url), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log('wrote openapi/openapi.json');
