import { randomBytes } from 'node:crypto';
import type { CodeGenerator } from '#data/code-generators';

/**
 * Code generation: cryptographically random characters. `tillgate` codes use an unambiguous
 * alphabet of 32 (no 0/O, 1/I/L), so each random byte's low five bits pick a character with no
 * bias; `numeric` codes take bytes below 250 and their value modulo 10, refusing the rest.
 */
const TILLGATE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const DIGITS = '0123456789';

export type CodeSettings = Pick<CodeGenerator, 'generation_type' | 'code_length' | 'prefix'>;

export function randomCode(settings: CodeSettings): string {
  return codeFromBytes(settings, () => randomBytes(settings.code_length * 2));
}

/** A code of the generator's shape read from the bytes `bytes` gives, block after block, until it is long enough. */
export function codeFromBytes(settings: CodeSettings, bytes: (block: number) => Uint8Array): string {
  let code = settings.prefix;
  const numeric = settings.generation_type === 'numeric';
  const end = settings.prefix.length + settings.code_length;
  for (let block = 0; code.length < end; block++) {
    for (const byte of bytes(block)) {
      if (code.length === end) break;
      if (!numeric) code += TILLGATE_ALPHABET[byte & 31];
      else if (byte < 250) code += DIGITS[byte % 10];
    }
  }
  return code;
}

/** How many distinct codes a generator can issue. */
export function codeSpace(settings: CodeSettings): number {
  return (settings.generation_type === 'numeric' ? 10 : 32) ** settings.code_length;
}
