import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { HostId } from '../functions/routes.ts';

/**
 * Checks a response against a host's OpenAPI document: the status is one the operation declares,
 * the declared required headers are present (and match their schemas), and the body matches its
 * schema. Shared by the test suite (every response it gets, against the document built from the
 * code) and by `npm run smoke` (every response of a deployed stage, against the published
 * openapi/*.json); each says where a problem was found in its own words.
 */
interface CheckedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

interface DocumentedOperation {
  readonly operationId: string;
  /** The path template of the document, e.g. `/v1.0/codegen/{id}`. */
  readonly template: string;
}

export interface OpenApiChecker {
  /** The operation of the document that serves `method` on `pathname` (no query), as API Gateway routes it. */
  operation(host: HostId, method: string, pathname: string): DocumentedOperation | undefined;
  /**
   * What is wrong with a response, as short sentences (empty when nothing is). A path no
   * operation serves is answered by the gateway: only the host's error shape applies to it.
   */
  problems(host: HostId, method: string, pathname: string, response: CheckedResponse): string[];
  /** What is wrong with a body as this host's error shape (empty when it is one). */
  errorShapeProblems(host: HostId, text: string): string[];
}

const pointerSegment = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const errorSchema = (host: HostId) => `/components/schemas/${host === 'core' ? 'CoreError' : 'PosError'}`;

export function openApiChecker(documents: Readonly<Record<HostId, any>>): OpenApiChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  for (const [host, document] of Object.entries(documents)) ajv.addSchema({ ...document, $id: `openapi-${host}` });
  const validators = new Map<string, ValidateFunction>();
  const validator = (key: string, schema: () => object) => {
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile(schema());
      validators.set(key, validate);
    }
    return validate;
  };

  const bodyProblems = (host: HostId, pointer: string, text: string): string[] => {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return [`body is not JSON: ${JSON.stringify(text.slice(0, 200))}`];
    }
    const validate = validator(`${host}${pointer}`, () => ({ $ref: `openapi-${host}#${pointer}` }));
    return validate(body) ? [] : [`body: ${ajv.errorsText(validate.errors)}`];
  };

  const operation = (host: HostId, method: string, pathname: string): DocumentedOperation | undefined => {
    const segments = pathname.split('/');
    let best: { operation: DocumentedOperation; parameters: number } | undefined;
    for (const [template, item] of Object.entries<any>(documents[host].paths)) {
      const parts = template.split('/');
      const declared = item[method.toLowerCase()];
      if (!declared || parts.length !== segments.length) continue;
      let parameters = 0;
      const matches = parts.every((part, i) => {
        if (!part.startsWith('{') || !part.endsWith('}')) return part === segments[i];
        parameters++;
        return segments[i] !== '';
      });
      // As API Gateway: a literal segment wins over a parameter.
      if (matches && (!best || parameters < best.parameters)) best = { operation: { operationId: declared.operationId, template }, parameters };
    }
    return best?.operation;
  };

  return {
    operation,
    errorShapeProblems: (host, text) => bodyProblems(host, errorSchema(host), text),
    problems(host, method, pathname, response) {
      const match = operation(host, method, pathname);
      if (!match) return response.status >= 400 ? bodyProblems(host, errorSchema(host), response.text) : [];
      const responses = documents[host].paths[match.template][method.toLowerCase()].responses;
      const declared = responses[String(response.status)];
      if (!declared) return [`${response.status} is not a documented status of ${match.operationId}`];

      const problems: string[] = [];
      for (const [name, spec] of Object.entries<any>(declared.headers ?? {})) {
        const value = response.headers.get(name);
        if (value === null) {
          if (spec.required) problems.push(`lacks required header ${name}`);
          continue;
        }
        const validate = validator(JSON.stringify(spec.schema), () => spec.schema);
        if (!validate(value)) problems.push(`header ${name}: ${ajv.errorsText(validate.errors)} (got ${JSON.stringify(value)})`);
      }

      if ('x-raw-body' in declared) {
        if (response.text !== declared['x-raw-body'])
          problems.push(`body should be ${JSON.stringify(declared['x-raw-body'])}, got ${JSON.stringify(response.text.slice(0, 200))}`);
      } else if (declared.content?.['application/json']) {
        const pointer = `/paths/${pointerSegment(match.template)}/${method.toLowerCase()}/responses/${response.status}/content/application~1json/schema`;
        problems.push(...bodyProblems(host, pointer, response.text));
      } else if (response.text !== '') {
        problems.push('should have no body');
      }
      return problems;
    },
  };
}
