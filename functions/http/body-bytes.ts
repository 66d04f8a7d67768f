import { badRequest } from './errors.ts';

/**
 * The request body exactly as the client sent it. API Gateway passes every body base64-encoded
 * (`binaryMediaTypes: ['*\/*']` on both REST APIs, and the local server does the same), so its
 * size is counted on the bytes received, and bytes that are not UTF-8 are refused instead of
 * being silently replaced with U+FFFD.
 */
export function requestBodyBytes(event: { body?: string | null; isBase64Encoded?: boolean }): Buffer {
  const body = event.body ?? '';
  // Decoding is exact whatever the padding ("eyJ9" is 3 bytes, "e30=" 2, "ew==" 1).
  return event.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}

// fatal: invalid sequences throw instead of becoming U+FFFD. ignoreBOM: a leading BOM stays in
// the text (and fails JSON.parse, as before), rather than being dropped unseen.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text, or a 400 when its bytes are not valid UTF-8. */
export function decodeUtf8Body(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw badRequest('Request body is not valid UTF-8');
  }
}
