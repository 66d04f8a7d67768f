import { describe, expect, it } from 'vitest';
import { decodeUtf8Body, requestBodyBytes } from '../../../functions/http/body-bytes.ts';
import { HttpError } from '../../../functions/http/errors.ts';

describe('request bodies as bytes', () => {
  it.each([0, 1, 2, 3, 4, 5, 16_383, 16_384, 16_385])('counts a base64 body of %i bytes exactly, whatever its padding', (size) => {
    const bytes = Buffer.alloc(size, 0xc3);
    const body = bytes.toString('base64');
    expect(requestBodyBytes({ body, isBase64Encoded: true }).length).toBe(size);
    // The estimate it replaces was off by the padding.
    if (size % 3 !== 0) expect(Math.floor((body.length * 3) / 4)).not.toBe(size);
  });

  it('reads a text body as its UTF-8 bytes, and no body as none', () => {
    expect(requestBodyBytes({ body: 'Café', isBase64Encoded: false })).toEqual(Buffer.from('Café', 'utf8'));
    expect(requestBodyBytes({ body: null, isBase64Encoded: false }).length).toBe(0);
  });

  it('decodes UTF-8, keeping a byte-order mark where it is (JSON.parse then refuses it, as before)', () => {
    expect(decodeUtf8Body(Buffer.from('{"a":"Café 😀"}', 'utf8'))).toBe('{"a":"Café 😀"}');
    expect(decodeUtf8Body(Buffer.from('\ufeff{}', 'utf8'))).toBe('\ufeff{}');
  });

  it.each([
    ['Latin-1', Buffer.from('Café', 'latin1')],
    ['a lone continuation byte', Buffer.from([0x7b, 0x80, 0x7d])],
    ['an overlong encoding', Buffer.from([0xc0, 0xaf])],
    ['an encoded surrogate', Buffer.from([0xed, 0xa0, 0x80])],
    ['a truncated sequence', Buffer.from([0xf0, 0x9f, 0x98])],
  ])('refuses %s with a 400', (_, bytes) => {
    let thrown: unknown;
    try {
      decodeUtf8Body(bytes);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect(thrown).toMatchObject({ statusCode: 400, code: 'bad_request', problems: [{ message: 'Request body is not valid UTF-8' }] });
  });
});
