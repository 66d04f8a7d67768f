import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type DecryptCommand, GenerateDataKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { isTransientFault } from '../../../functions/http/errors.ts';
import { keys } from '../../../functions/secrets.ts';
import {
  DATA_KEY_REUSE_COUNT,
  DATA_KEY_REUSE_MS,
  envelope,
  kmsKeyProvider,
  localKeyProvider,
  OPENED_KEY_MAX,
  OPENED_KEY_TTL_MS,
  SealedValueUnreadableError,
  type DataKey,
  type KeyProvider,
} from '../../../functions/runtime/envelope.ts';

/**
 * functions/runtime/envelope.ts: AES-256-GCM under cached data keys, the data keys from KMS or
 * the local stand-in. KMS is not on this machine: the KMS provider is checked against a stand-in
 * for the SDK client that answers as KMS does (and fails as it can), which is what it sends and
 * how it reads the answers and the faults.
 */
const spec = keys.webhookSecrets;
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** The local provider, counting its calls. */
function counted(): KeyProvider & { generated: number; decrypted: number } {
  const inner = localKeyProvider(spec, randomBytes(32));
  const provider = {
    kind: 'local' as const,
    generated: 0,
    decrypted: 0,
    generateDataKey: () => {
      provider.generated++;
      return inner.generateDataKey();
    },
    decrypt: (blob: Uint8Array) => {
      provider.decrypted++;
      return inner.decrypt(blob);
    },
  };
  return provider;
}

describe('sealing and opening', () => {
  it('round-trips, and refuses other additional data, changed bytes and another local key', async () => {
    const box = envelope(() => localKeyProvider(spec, randomBytes(32)));
    const sealed = await box.seal(Buffer.from('whsec_abc'), 'endpoint 1/2');
    expect((await box.open(sealed, 'endpoint 1/2')).toString()).toBe('whsec_abc');
    expect(Buffer.from(sealed.data).toString()).not.toContain('whsec');
    await expect(box.open(sealed, 'endpoint 1/3')).rejects.toBeInstanceOf(SealedValueUnreadableError);
    const changed = Buffer.from(sealed.data);
    changed[0]! ^= 1;
    await expect(box.open({ ...sealed, data: changed }, 'endpoint 1/2')).rejects.toBeInstanceOf(SealedValueUnreadableError);
    const other = envelope(() => localKeyProvider(spec, randomBytes(32)));
    await expect(other.open(sealed, 'endpoint 1/2')).rejects.toBeInstanceOf(SealedValueUnreadableError);
    expect(isTransientFault(new SealedValueUnreadableError('x'))).toBe(false);
  });
});

describe('the data key caches', () => {
  it(`reuse one generated data key for ${DATA_KEY_REUSE_COUNT} seals, then make another; and after ${DATA_KEY_REUSE_MS / 60_000} minutes`, async () => {
    const provider = counted();
    const box = envelope(() => provider);
    const first = await Promise.all(Array.from({ length: DATA_KEY_REUSE_COUNT }, (_, i) => box.seal(Buffer.from(`s${i}`), 'a')));
    expect(provider.generated).toBe(1);
    expect(new Set(first.map((s) => Buffer.from(s.key).toString('hex'))).size).toBe(1);
    await box.seal(Buffer.from('one more'), 'a');
    expect(provider.generated).toBe(2);
    vi.useFakeTimers({ now: Date.now() + DATA_KEY_REUSE_MS });
    await box.seal(Buffer.from('later'), 'a');
    expect(provider.generated).toBe(3);
  });

  it(`open each data key with one Decrypt, shared by concurrent calls, kept ${OPENED_KEY_TTL_MS / 60_000} minutes, at most ${OPENED_KEY_MAX} keys`, async () => {
    const provider = counted();
    // One process seals (as the create route), another opens (as the sender), with the same key.
    const sealed = await envelope(() => provider).seal(Buffer.from('whsec_x'), 'a');
    const box = envelope(() => provider);
    await Promise.all(Array.from({ length: 20 }, () => box.open(sealed, 'a')));
    expect(provider.decrypted).toBe(1);
    vi.useFakeTimers({ now: Date.now() + OPENED_KEY_TTL_MS });
    await box.open(sealed, 'a');
    expect(provider.decrypted).toBe(2);
    vi.useRealTimers();
    // Past the bound the oldest key leaves first.
    const many: DataKey[] = await Promise.all(Array.from({ length: OPENED_KEY_MAX }, () => provider.generateDataKey()));
    await Promise.all(
      many.map((dataKey) => box.open({ v: 1, key: dataKey.encrypted, iv: randomBytes(12), data: randomBytes(16) }, 'a').catch(() => undefined)),
    );
    expect(provider.decrypted).toBe(2 + OPENED_KEY_MAX);
    await box.open(sealed, 'a');
    expect(provider.decrypted).toBe(3 + OPENED_KEY_MAX);
  });

  it('forget a failed Decrypt: the next call asks again', async () => {
    const provider = counted();
    const sealed = await envelope(() => provider).seal(Buffer.from('whsec_y'), 'a');
    const box = envelope(() => provider);
    const decrypt = provider.decrypt;
    provider.decrypt = () => Promise.reject(Object.assign(new Error('throttled'), { name: 'KeyUnavailableError' }));
    await expect(box.open(sealed, 'a')).rejects.toMatchObject({ name: 'KeyUnavailableError' });
    provider.decrypt = decrypt;
    expect((await box.open(sealed, 'a')).toString()).toBe('whsec_y');
  });
});

describe('the KMS provider', () => {
  const ARN = 'arn:aws:kms:eu-west-1:111111111111:key/00000000-0000-0000-0000-000000000000';
  /** KMS as the SDK client sees it: data keys wrapped under a master key, bound to the encryption context. */
  function fakeKms(fault?: string) {
    const master = randomBytes(32);
    const client = new KMSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const sent: unknown[] = [];
    vi.spyOn(client, 'send').mockImplementation((async (command: GenerateDataKeyCommand | DecryptCommand) => {
      sent.push(command);
      if (fault) throw Object.assign(new Error(`${fault} from KMS`), { name: fault, $metadata: { httpStatusCode: 400 } });
      const aad = Buffer.from(JSON.stringify(command.input.EncryptionContext));
      if (command instanceof GenerateDataKeyCommand) {
        const plaintext = randomBytes(32);
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', master, iv).setAAD(aad);
        return { Plaintext: plaintext, CiphertextBlob: Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]) };
      }
      const blob = Buffer.from(command.input.CiphertextBlob!);
      const decipher = createDecipheriv('aes-256-gcm', master, blob.subarray(0, 12)).setAAD(aad);
      decipher.setAuthTag(blob.subarray(blob.length - 16));
      return { Plaintext: Buffer.concat([decipher.update(blob.subarray(12, blob.length - 16)), decipher.final()]) };
    }) as never);
    return { client, sent };
  }

  it('asks for AES-256 data keys of its key, with the encryption context, and decrypts with both', async () => {
    const { client, sent } = fakeKms();
    const box = envelope(() => kmsKeyProvider(spec, ARN, client));
    const sealed = await box.seal(Buffer.from('whsec_z'), 'a');
    box.forget();
    expect((await box.open(sealed, 'a')).toString()).toBe('whsec_z');
    expect(sent.map((c: any) => [c.constructor.name, c.input.KeyId, c.input.EncryptionContext, c.input.KeySpec])).toEqual([
      ['GenerateDataKeyCommand', ARN, { 'tillgate:use': 'webhook-signing-secrets' }, 'AES_256'],
      ['DecryptCommand', ARN, { 'tillgate:use': 'webhook-signing-secrets' }, undefined],
    ]);
  });

  it('turns a refusal or a throttle into KeyUnavailableError (503, retried), a foreign blob into SealedValueUnreadableError; names no key material', async () => {
    for (const [fault, name, transient] of [
      ['ThrottlingException', 'KeyUnavailableError', true],
      ['AccessDeniedException', 'KeyUnavailableError', true],
      ['DisabledException', 'KeyUnavailableError', true],
      ['InvalidCiphertextException', 'SealedValueUnreadableError', false],
    ] as const) {
      const provider = kmsKeyProvider(spec, ARN, fakeKms(fault).client);
      const error = await provider.decrypt(randomBytes(60)).catch((e: unknown) => e as Error);
      expect(error, fault).toMatchObject({ name, message: `KMS Decrypt ${transient ? 'failed' : 'refused the data key'} (${fault})` });
      expect(isTransientFault(error), fault).toBe(transient);
      const generated = await provider.generateDataKey().catch((e: unknown) => e as Error);
      expect((generated as Error).name, fault).toBe(name);
    }
  });
});
