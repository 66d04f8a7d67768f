import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import type { HostId } from '../functions/routes.ts';

/**
 * The typed client's types (client/core.ts, client/pos.ts): openapi-typescript at its default
 * options, from a host's OpenAPI document, exactly as its CLI writes them
 * (`npx openapi-typescript openapi/core.json`, which here would read redocly.yaml instead).
 * `npm run openapi` writes them beside the documents; test/unit/client/types.test.ts fails while
 * the committed ones differ from what this makes of the committed documents.
 */
export async function clientTypes(document: object): Promise<string> {
  return `${COMMENT_HEADER}${astToString(await openapiTS(document as Parameters<typeof openapiTS>[0], { silent: true }))}`;
}

export const clientTypesFile = (host: HostId) => new URL(`../client/${host}.ts`, import.meta.url);
