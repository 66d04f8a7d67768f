import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { hasSecretForm, keys, type KeyId, type KeySpec } from '#functions/secrets';
import { deadlineSignal } from './deadline.ts';

/**
 * Envelope encryption of small secrets (the webhook signing secrets, data/webhook-secrets.ts).
 *
 * Each value is encrypted with AES-256-GCM under a data key, with additional authenticated data
 * the caller names (the account and endpoint ids): a ciphertext copied to another item does not
 * open. The data key itself is stored beside it, encrypted by the key of functions/secrets.ts
 * (`keys`): in AWS a customer-managed KMS key (GenerateDataKey makes a data key and its encrypted
 * form; Decrypt opens the encrypted form), on the local stack a key from the environment that
 * wraps data keys with AES-256-GCM as KMS would. Only the key provider differs: everything here,
 * caches included, is the same code in both.
 *
 * Two caches per execution environment, so that the common case costs no KMS call:
 * - sealing reuses one generated data key for at most DATA_KEY_REUSE_MS and DATA_KEY_REUSE_COUNT
 *   values (far below what AES-GCM with random 96-bit nonces allows under one key, 2^32). The
 *   process that seals knows every value it sealed anyway, so reuse shows it nothing more.
 * - opening keeps each decrypted data key, by its encrypted form, for OPENED_KEY_TTL_MS, at most
 *   OPENED_KEY_MAX of them (the oldest leaves first). Calls at once for one data key share one
 *   Decrypt. A key disabled in KMS stops the senders within that time.
 */
export const DATA_KEY_REUSE_MS = 3600_000;
export const DATA_KEY_REUSE_COUNT = 1000;
export const OPENED_KEY_TTL_MS = 3600_000;
export const OPENED_KEY_MAX = 10_000;

/**
 * The key could not be used: KMS refused (access denied, key disabled), throttled, timed out or
 * is unreachable. A retry may cure it: its name is one of the transient faults of
 * functions/http/errors.ts (a route answers 503 with Retry-After; the sender's message is
 * delivered again). The message names the call and the error's name, never key material.
 */
export class KeyUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KeyUnavailableError';
  }
}

/**
 * A stored value does not open: its ciphertext was moved to another item, changed, or made
 * under another key. No retry cures it.
 */
export class SealedValueUnreadableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SealedValueUnreadableError';
  }
}

/** What is stored: the encrypted data key, the nonce, and the ciphertext with its 16-byte tag. */
export interface Sealed {
  readonly v: 1;
  readonly key: Uint8Array;
  readonly iv: Uint8Array;
  readonly data: Uint8Array;
}

export interface DataKey {
  readonly plaintext: Buffer;
  readonly encrypted: Uint8Array;
}

/** What KMS does for the envelope (or its local stand-in). */
export interface KeyProvider {
  readonly kind: 'kms' | 'local';
  generateDataKey(): Promise<DataKey>;
  decrypt(encrypted: Uint8Array): Promise<Buffer>;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

function gcmSeal(key: Buffer, plaintext: Buffer, aad: Buffer): { iv: Buffer; data: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad);
  return { iv, data: Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]) };
}

/** Throws when the tag does not match (another key, other additional data, changed bytes). */
function gcmOpen(key: Buffer, iv: Uint8Array, data: Uint8Array, aad: Buffer): Buffer {
  if (iv.length !== IV_BYTES || data.length < TAG_BYTES) throw new Error('not an AES-GCM ciphertext');
  const bytes = Buffer.from(data);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv)).setAAD(aad);
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]);
}

const contextBytes = (spec: KeySpec) => Buffer.from(JSON.stringify(spec.encryptionContext));

/**
 * The local stand-in for KMS: data keys wrapped with AES-256-GCM under `key` (its encryption
 * context as additional data), stored as nonce, ciphertext and tag in one blob.
 */
export function localKeyProvider(spec: KeySpec, key: Buffer): KeyProvider {
  const aad = contextBytes(spec);
  return {
    kind: 'local',
    generateDataKey: () => {
      const plaintext = randomBytes(32);
      const { iv, data } = gcmSeal(key, plaintext, aad);
      return Promise.resolve({ plaintext, encrypted: Buffer.concat([iv, data]) });
    },
    decrypt: (encrypted) => {
      try {
        return Promise.resolve(gcmOpen(key, encrypted.subarray(0, IV_BYTES), encrypted.subarray(IV_BYTES), aad));
      } catch (error) {
        return Promise.reject(
          new SealedValueUnreadableError(`A data key does not open with the local ${spec.localEnvVar} (was its key file replaced?)`, { cause: error }),
        );
      }
    },
  };
}

/** KMS's answers that no retry cures: the blob is not one this key made with this context. */
const UNREADABLE_KMS_ERRORS = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);

/** The customer-managed KMS key `arn`, every call with the key's encryption context. */
export function kmsKeyProvider(spec: KeySpec, arn: string, client?: KMSClient): KeyProvider {
  let kms = client;
  const send = async <T>(operation: string, call: (kms: KMSClient, options: { abortSignal?: AbortSignal }) => Promise<T>): Promise<T> => {
    kms ??= new KMSClient({
      // As the DynamoDB client (clients.ts): a slow moment is retried, a hang is not waited out.
      maxAttempts: 3,
      requestHandler: { connectionTimeout: 1000, requestTimeout: 2000, throwOnRequestTimeout: true },
    });
    const signal = deadlineSignal();
    try {
      return await call(kms, signal ? { abortSignal: signal } : {});
    } catch (error) {
      const name = error instanceof Error ? error.name : 'an error';
      if (UNREADABLE_KMS_ERRORS.has(name)) throw new SealedValueUnreadableError(`KMS ${operation} refused the data key (${name})`, { cause: error });
      throw new KeyUnavailableError(`KMS ${operation} failed (${name})`, { cause: error });
    }
  };
  return {
    kind: 'kms',
    generateDataKey: () =>
      send('GenerateDataKey', async (c, options) => {
        const answer = await c.send(new GenerateDataKeyCommand({ KeyId: arn, KeySpec: 'AES_256', EncryptionContext: { ...spec.encryptionContext } }), options);
        if (!answer.Plaintext || !answer.CiphertextBlob) throw new Error('GenerateDataKey answered without a key');
        return { plaintext: Buffer.from(answer.Plaintext), encrypted: answer.CiphertextBlob };
      }),
    decrypt: (encrypted) =>
      send('Decrypt', async (c, options) => {
        const answer = await c.send(new DecryptCommand({ KeyId: arn, CiphertextBlob: encrypted, EncryptionContext: { ...spec.encryptionContext } }), options);
        if (!answer.Plaintext) throw new Error('Decrypt answered without a key');
        return Buffer.from(answer.Plaintext);
      }),
  };
}

/** The provider the environment names: the key's ARN (AWS) or the local key itself, not both. */
export function providerFromEnvironment(id: KeyId): KeyProvider {
  const spec: KeySpec = keys[id];
  const value = process.env[spec.localEnvVar];
  const arn = process.env[spec.arnEnvVar];
  if (value && arn) throw new Error(`Set ${spec.arnEnvVar} (AWS) or ${spec.localEnvVar} (the local stack), not both`);
  if (arn) return kmsKeyProvider(spec, arn);
  if (!value) throw new Error(`Missing the ${id} key: ${spec.arnEnvVar} (AWS) or ${spec.localEnvVar} (the local stack) must be set`);
  // The message names the form only: the value is a secret.
  if (!hasSecretForm(spec, value)) throw new Error(`${spec.localEnvVar} must be ${spec.bytes * 2} lowercase hexadecimal characters (${spec.bytes} bytes)`);
  return localKeyProvider(spec, Buffer.from(value, 'hex'));
}

export interface Envelope {
  /** The key provider, settled at the first use (a function that never seals or opens needs no key). */
  readonly provider: KeyProvider;
  seal(plaintext: Buffer, aad: string): Promise<Sealed>;
  open(sealed: Sealed, aad: string): Promise<Buffer>;
  /** Drops both caches, as a new execution environment starts without them. */
  forget(): void;
}

export function isSealed(value: unknown): value is Sealed {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.v === 1 && v.key instanceof Uint8Array && v.iv instanceof Uint8Array && v.data instanceof Uint8Array;
}

export function envelope(resolve: () => KeyProvider): Envelope {
  let provider: KeyProvider | undefined;
  let current: { key: Promise<DataKey>; madeAt: number; uses: number } | undefined;
  const opened = new Map<string, { key: Promise<Buffer>; expiresAt: number }>();

  const remember = (encrypted: Uint8Array, key: Promise<Buffer>) => {
    const id = Buffer.from(encrypted).toString('base64');
    opened.delete(id);
    opened.set(id, { key, expiresAt: Date.now() + OPENED_KEY_TTL_MS });
    while (opened.size > OPENED_KEY_MAX) opened.delete(opened.keys().next().value!);
    key.catch(() => {
      if (opened.get(id)?.key === key) opened.delete(id);
    });
  };

  const self: Envelope = {
    get provider() {
      provider ??= resolve();
      return provider;
    },
    async seal(plaintext, aad) {
      const now = Date.now();
      if (!current || current.uses >= DATA_KEY_REUSE_COUNT || now - current.madeAt >= DATA_KEY_REUSE_MS) {
        const key = self.provider.generateDataKey();
        current = { key, madeAt: now, uses: 0 };
        const made = current;
        key.then(
          (dataKey) => remember(dataKey.encrypted, Promise.resolve(dataKey.plaintext)),
          () => {
            if (current === made) current = undefined; // the next seal asks again
          },
        );
      }
      current.uses++;
      const dataKey = await current.key;
      const { iv, data } = gcmSeal(dataKey.plaintext, plaintext, Buffer.from(aad));
      return { v: 1, key: dataKey.encrypted, iv, data };
    },
    async open(sealed, aad) {
      const id = Buffer.from(sealed.key).toString('base64');
      let entry = opened.get(id);
      if (!entry || entry.expiresAt <= Date.now()) {
        remember(sealed.key, self.provider.decrypt(sealed.key));
        entry = opened.get(id)!;
      }
      const key = await entry.key;
      try {
        return gcmOpen(key, sealed.iv, sealed.data, Buffer.from(aad));
      } catch (error) {
        throw new SealedValueUnreadableError('A stored value does not open under its own data key: it was moved to another item or changed', { cause: error });
      }
    },
    forget() {
      current = undefined;
      opened.clear();
    },
  };
  return self;
}
