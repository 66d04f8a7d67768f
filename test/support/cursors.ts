import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { TEST_CURSOR_KEY } from './customer-key.ts';

/**
 * List cursors as the service makes them with the tests' cursor key (functions/http/pagination.ts),
 * computed here from their definition, so that a fuzzer can forge a well-sealed cursor of another
 * account or other filters, and read the real ones it was given.
 */
const subkey = (label: string) => Buffer.from(hkdfSync('sha256', Buffer.from(TEST_CURSOR_KEY, 'hex'), Buffer.alloc(0), label, 32));
const encryption = subkey('tillgate list cursor: encryption');
const nonceKey = subkey('tillgate list cursor: nonce');

/** The cursor of this content (any JSON value: the service makes `[account, filters, after]`). */
export function sealCursor(content: unknown): string {
  const plain = JSON.stringify(content);
  const version = Buffer.from([1]);
  const nonce = createHmac('sha256', nonceKey).update(version).update(plain).digest().subarray(0, 12);
  const cipher = createCipheriv('aes-256-gcm', encryption, nonce);
  cipher.setAAD(version);
  const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([version, nonce, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** What a cursor holds, or undefined when it is not one sealed with the tests' key. */
export function openCursor(cursor: string): unknown {
  try {
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.length < 29 || bytes[0] !== 1 || bytes.toString('base64url') !== cursor) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', encryption, bytes.subarray(1, 13));
    decipher.setAAD(bytes.subarray(0, 1));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(13, bytes.length - 16)), decipher.final()]).toString('utf8'));
  } catch {
    return undefined;
  }
}
