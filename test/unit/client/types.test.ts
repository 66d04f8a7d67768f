import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hosts } from '../../../functions/routes.ts';
import { clientTypes, clientTypesFile } from '../../../openapi/client-types.ts';

describe("the typed client's generated types", () => {
  it.each(Object.keys(hosts) as (keyof typeof hosts)[])(
    'client/%s.ts is what openapi-typescript makes of the committed document (run `npm run openapi`)',
    async (host) => {
      const document = JSON.parse(readFileSync(`openapi/${host}.json`, 'utf8'));
      expect(readFileSync(clientTypesFile(host), 'utf8') === (await clientTypes(document)), `client/${host}.ts is stale`).toBe(true);
    },
  );
});
