import type { APIGatewayProxyEvent } from 'aws-lambda';
import { decodeUtf8Body, requestBodyBytes } from '#http/body-bytes';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '#http/errors';
import { MAX_BODY_BYTES } from '#http/limits';
import { checkBody, isPlainObject } from '#http/validation';
import type { ApiMiddleware, ApiRequest, BodyOptions } from '#http/request';

/**
 * Hand-written: the request body, checked in the contract's order: size, content type, UTF-8,
 * JSON, shape, fields (the ajv validators of schemas.ts, and with them the route's rules for what
 * a schema cannot say: every problem of the fields in one 422). middy's http-json-body-parser does not
 * fit the contract: it answers malformed JSON with 422 (the contract: 400), refuses a missing
 * Content-Type (the contract reads it as JSON), refuses `__proto__` keys that the pos host must
 * ignore, and its prototype-guarding reviver overflows the stack on bodies nested a few thousand
 * levels deep, which the contract accepts (plain JSON.parse creates such keys as own data
 * properties, so nothing is polluted).
 */
export function jsonBody(options: BodyOptions): ApiMiddleware {
  const properties = Object.keys(options.schema.schema.properties);
  const describeShape = options.root ? `a JSON object with a "${options.root}" object` : 'a JSON object';

  return {
    before: (request) => {
      const raw = request.event as unknown as APIGatewayProxyEvent;
      // Bytes as received: API Gateway passes every body base64-encoded (binary media type */*).
      const bytes = requestBodyBytes(raw);
      if (bytes.length > MAX_BODY_BYTES) throw payloadTooLarge(MAX_BODY_BYTES);
      const contentType = request.event.headers['content-type'];
      const mediaTypeProblem = contentType === undefined ? undefined : jsonMediaTypeProblem(contentType);
      if (mediaTypeProblem) throw unsupportedMediaType(mediaTypeProblem);
      const text = decodeUtf8Body(bytes);
      // No body: nothing but JSON's own white space. String.prototype.trim() would also take a lone
      // byte-order mark or a no-break space for none, and an optional body's route would accept
      // that text, which is not JSON, as `{}` (found by test/attack/codes/bulk-fuzz.test.ts).
      const blank = JSON_WHITE_SPACE.test(text);
      if (blank && options.optional) {
        (request as ApiRequest).event.body = {};
        return;
      }
      if (blank) throw badRequest(`Request body is required: ${describeShape}`);

      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw badRequest('Request body is not valid JSON');
      }
      const resource = options.root ? (isPlainObject(parsed) ? parsed[options.root] : undefined) : parsed;
      if (!isPlainObject(resource) || (options.root && !Object.hasOwn(parsed as object, options.root))) {
        throw badRequest(`Request body must be ${describeShape}`, options.root);
      }
      if (options.lenient) {
        for (const [key, value] of Object.entries(resource)) if (value === null || !properties.includes(key)) delete resource[key];
      }
      (request as ApiRequest).event.body = checkBody(options.schema, resource, options.root ?? '', options.rules);
    },
  };
}

/**
 * application/json or any +json type; a charset, if given, must be UTF-8. Returns what is wrong,
 * naming the actual fault (the media type, or its charset), or undefined.
 */
function jsonMediaTypeProblem(header: string): string | undefined {
  // HTTP's optional white space is SP and HTAB only (RFC 9110 §5.6.3), not String.prototype.trim's.
  const [type = '', ...parameters] = header.split(';').map((part) => trimOws(part).toLowerCase());
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return 'Content-Type must be application/json';
  const charset = parameters
    .map((parameter) => parameter.split('=').map((part) => trimOws(part).replace(/^"|"$/g, '')))
    .find(([name]) => name === 'charset')?.[1];
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return undefined;
  const shown = /^[a-z0-9._:-]{1,40}$/.test(charset) ? ` (got charset=${charset})` : '';
  return `Content-Type charset must be utf-8${shown}: send the body as UTF-8`;
}

/** JSON's white space (RFC 8259: space, tab, line feed, carriage return), and nothing else. */
const JSON_WHITE_SPACE = /^[ \t\n\r]*$/;

const trimOws = (text: string) => text.replace(/^[ \t]+|[ \t]+$/g, '');
