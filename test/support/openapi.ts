import { mkdirSync, writeFileSync } from 'node:fs';
import type { HostId } from '../../functions/routes.ts';
import { matchRoute } from '../../local/server.ts';
import { openApiChecker } from '../../openapi/check.ts';
import { openApiDocument } from '../../openapi/document.ts';

/**
 * Checks a response against the OpenAPI document built from the code (openapi/check.ts): the
 * status is one the operation declares, the declared required headers are present (and match
 * their schemas), and the body matches its schema. `call()` runs it on every response, so every
 * HTTP test also checks the document.
 */
const checker = openApiChecker({ core: openApiDocument('core'), pos: openApiDocument('pos') });

/**
 * The first response the suite gets for each operation and status, kept as the documents'
 * examples (`npm run openapi -- --examples` takes them into openapi/examples.json).
 */
const recorded = new Map<string, { value: unknown; summary: string }>();
export function recordExample(host: HostId, method: string, path: string, response: { status: number; text: string }, summary: string) {
  const match = matchRoute(host, method, path.split('?')[0]!);
  if (!match) return;
  const key = `${match.route.operationId} ${response.status}`;
  if (recorded.has(key)) return;
  try {
    recorded.set(key, { value: JSON.parse(response.text), summary });
  } catch {
    return; // not JSON (304, the one-byte DELETE answer): nothing to show
  }
  // Written through at once: test workers can end without an exit event.
  const directory = 'reports/openapi-examples';
  mkdirSync(directory, { recursive: true });
  writeFileSync(`${directory}/${process.pid}.json`, JSON.stringify(Object.fromEntries(recorded)));
}

export function checkAgainstOpenApi(host: HostId, method: string, path: string, response: { status: number; headers: Headers; text: string }): void {
  const problems = checker.problems(host, method, path.split('?')[0]!, response);
  if (problems.length > 0) {
    throw new Error(`OpenAPI: ${method} ${path} → ${response.status} ${problems.join('; ')}\n${response.text.slice(0, 500)}`);
  }
}
