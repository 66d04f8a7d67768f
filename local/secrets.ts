import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hasSecretForm, keyIds, keys, secretIds, secrets, type KeyId, type SecretId } from '../functions/secrets.ts';

/**
 * The local stand-ins for Secrets Manager and KMS (functions/secrets.ts): the functions get each
 * secret's value itself, and each key's local key (which wraps data keys as KMS would:
 * functions/runtime/envelope.ts), in its `localEnvVar`. `npm start` keeps the values in
 * git-ignored files under .local/ (mode 0600, never printed), made once, so that what was hashed
 * or encrypted with them yesterday still matches today; the tests pass fixed values; a stack whose
 * data dies with it may take fresh random ones.
 */
export type LocalValueId = SecretId | KeyId;

const localIds: readonly LocalValueId[] = [...secretIds, ...keyIds];

interface LocalSpec {
  readonly localEnvVar: string;
  readonly bytes: number;
  /** What a new value costs, said when a file holds something else. */
  readonly ifReplaced: string;
}

const isKey = (id: LocalValueId): id is KeyId => (keyIds as readonly string[]).includes(id);

const specOf = (id: LocalValueId): LocalSpec => (isKey(id) ? keys[id] : { ...secrets[id], ifReplaced: 'what was hashed with the old one no longer matches' });

export type SecretValues = Readonly<Record<LocalValueId, string>>;

/** A new value of the spec's form: `bytes` random bytes in hexadecimal. */
function randomValue(id: LocalValueId): string {
  return randomBytes(specOf(id).bytes).toString('hex');
}

export const randomSecrets = (): SecretValues => Object.fromEntries(localIds.map((id) => [id, randomValue(id)])) as SecretValues;

/**
 * The value in `file`, made (and the file written, mode 0600) when there is none yet. A file that
 * holds something else is refused, never replaced: a new key would silently change every stored
 * hash made with it, or leave unreadable what was encrypted with it.
 */
export function ensureSecretFile(id: LocalValueId, file: string): { readonly value: string; readonly state: 'kept' | 'created' } {
  const spec = specOf(id);
  if (existsSync(file)) {
    const value = readFileSync(file, 'utf8').trim();
    if (!hasSecretForm(spec, value)) {
      throw new Error(
        `${file} does not hold a ${id} (${spec.bytes * 2} lowercase hexadecimal characters). Put back the one it held; ` +
          `or delete the file to have a new one made, knowing that ${spec.ifReplaced}.`,
      );
    }
    // An older checkout may have written it with a wider mode.
    chmodSync(file, 0o600);
    return { value, state: 'kept' };
  }
  const value = randomValue(id);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { value, state: 'created' };
}

/** The environment through which the functions read the values (each one's localEnvVar). */
export function secretEnvironment(values: SecretValues): Record<string, string> {
  for (const id of localIds) {
    if (!hasSecretForm(specOf(id), values[id] ?? '')) throw new Error(`The local ${id} must be ${specOf(id).bytes * 2} lowercase hexadecimal characters`);
  }
  return Object.fromEntries(localIds.map((id) => [specOf(id).localEnvVar, values[id]]));
}
