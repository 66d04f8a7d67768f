import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hasSecretForm, secretIds, secrets, type SecretId, type SecretSpec } from '../functions/secrets.ts';

/**
 * The local stand-in for Secrets Manager (functions/secrets.ts): the functions get each secret's
 * value itself, in its `localEnvVar`. `npm start` keeps the values in git-ignored files under
 * .local/ (mode 0600, never printed), made once, so that what was hashed with them yesterday
 * still matches today; the tests pass fixed values; a stack whose data dies with it may take
 * fresh random ones.
 */
export type SecretValues = Readonly<Record<SecretId, string>>;

/** A new value of the secret's form: `bytes` random bytes in hexadecimal. */
function randomSecret(spec: SecretSpec): string {
  return randomBytes(spec.bytes).toString('hex');
}

export const randomSecrets = (): SecretValues => Object.fromEntries(secretIds.map((id) => [id, randomSecret(secrets[id])])) as SecretValues;

/**
 * The value in `file`, made (and the file written, mode 0600) when there is none yet. A file that
 * holds something else is refused, never replaced: a new key would silently change every stored
 * hash made with it.
 */
export function ensureSecretFile(id: SecretId, file: string): { readonly value: string; readonly state: 'kept' | 'created' } {
  const spec: SecretSpec = secrets[id];
  if (existsSync(file)) {
    const value = readFileSync(file, 'utf8').trim();
    if (!hasSecretForm(spec, value)) {
      throw new Error(
        `${file} does not hold a ${id} (${spec.bytes * 2} lowercase hexadecimal characters). Put back the one it held; ` +
          'or delete the file to have a new one made, knowing that what was hashed with the old one no longer matches.',
      );
    }
    // An older checkout may have written it with a wider mode.
    chmodSync(file, 0o600);
    return { value, state: 'kept' };
  }
  const value = randomSecret(spec);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { value, state: 'created' };
}

/** The environment through which the functions read the values (each secret's localEnvVar). */
export function secretEnvironment(values: SecretValues): Record<string, string> {
  for (const id of secretIds) {
    if (!hasSecretForm(secrets[id], values[id])) throw new Error(`The local ${id} must be ${secrets[id].bytes * 2} lowercase hexadecimal characters`);
  }
  return Object.fromEntries(secretIds.map((id) => [secrets[id].localEnvVar, values[id]]));
}
