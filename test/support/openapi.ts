import { mkdirSync, writeFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { HostId } from '../../functions/routes.ts';
import { matchRoute } from '../../local/server.ts';
import { openApiDocument } from '../../openapi/document.ts';

/**
 * Checks a response against the OpenAPI document: the status is one the operation declares, the
 * declared required headers are present (and match their schemas), and the body matches its
 * schema. `call()` runs it on every response, so every HTTP test also checks the document.
 */
const documents = { core: openApiDocument('core'), pos: openApiDocument('pos') } satisfies Record<HostId, object>;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
for (const [host, document] of Object.entries(documents)) ajv.addSchema({ $id: `openapi-${host}`, ...document });

const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(host: HostId, pointer: string) {
  let validate = validators.get(`${host}${pointer}`);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi-${host}#${pointer}` });
    validators.set(`${host}${pointer}`, validate);
  }
  return validate;
}

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

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export function checkAgainstOpenApi(
  host: HostId,
  method: string,
  path: string,
  response: { status: number; headers: Headers; text: string },
): void {
  const where = `${method} ${path} → ${response.status}`;
  // Routed as the gateway routes it: the path exactly as sent, up to the query.
  const match = matchRoute(host, method, path.split('?')[0]!);
  if (!match) {
    // Answered by the gateway, not an operation: only the host's error shape applies.
    if (response.status >= 400) checkBody(host, `/components/schemas/${host === 'core' ? 'CoreError' : 'PosError'}`, response.text, where);
    return;
  }
  const operation = (documents[host].paths as any)[match.route.path][method.toLowerCase()];
  const declared = operation.responses[String(response.status)];
  if (!declared) throw new Error(`OpenAPI: ${where} is not a documented status of ${match.route.operationId}`);

  for (const [name, spec] of Object.entries<any>(declared.headers ?? {})) {
    const value = response.headers.get(name);
    if (value === null) {
      if (spec.required) throw new Error(`OpenAPI: ${where} lacks required header ${name}`);
      continue;
    }
    const validate = ajv.compile(spec.schema);
    if (!validate(value)) throw new Error(`OpenAPI: ${where} header ${name}: ${ajv.errorsText(validate.errors)} (got ${value})`);
  }

  if ('x-raw-body' in declared) {
    if (response.text !== declared['x-raw-body']) throw new Error(`OpenAPI: ${where} body should be ${JSON.stringify(declared['x-raw-body'])}`);
  } else if (declared.content?.['application/json']) {
    const pointer = `/paths/${escape(match.route.path)}/${method.toLowerCase()}/responses/${response.status}/content/application~1json/schema`;
    checkBody(host, pointer, response.text, where);
  } else if (response.text !== '') {
    throw new Error(`OpenAPI: ${where} should have no body`);
  }
}

function checkBody(host: HostId, pointer: string, text: string, where: string) {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`OpenAPI: ${where} body is not JSON: ${text.slice(0, 200)}`);
  }
  const validate = validatorFor(host, pointer);
  if (!validate(body)) throw new Error(`OpenAPI: ${where} body: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`);
}
