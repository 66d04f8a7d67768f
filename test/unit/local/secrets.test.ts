import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureSecretFile, randomSecrets, secretEnvironment } from '../../../local/secrets.ts';
import { startLocalStack } from '../../../local/stack.ts';

/**
 * The local stand-ins for Secrets Manager and KMS: `npm start` keeps the customer key and the
 * webhook secrets key each in a file under .local/ (git-ignored), made once with 32 random bytes,
 * the owner's only (0600), and hands them to the functions in TILLGATE_CUSTOMER_KEY and
 * TILLGATE_WEBHOOK_SECRETS_KEY.
 */
const directory = mkdtempSync(join(tmpdir(), 'tillgate-secrets-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("npm start's customer key file", () => {
  it('is made once, 64 hexadecimal characters (32 random bytes) in a file of mode 0600, then kept', () => {
    const file = join(directory, 'nested', 'customer-key');
    const made = ensureSecretFile('customerKey', file);
    expect(made.state).toBe('created');
    expect(made.value).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(file, 'utf8')).toBe(`${made.value}\n`);
    expect(mode(file)).toBe('600');

    chmodSync(file, 0o644);
    expect(ensureSecretFile('customerKey', file)).toEqual({ value: made.value, state: 'kept' });
    expect(mode(file)).toBe('600');
    // Another file, another key.
    expect(ensureSecretFile('customerKey', join(directory, 'other-key')).value).not.toBe(made.value);
  });

  it('is refused, and left as it is, when it holds something else: a new key would change every stored hash', () => {
    const file = join(directory, 'damaged-key');
    writeFileSync(file, 'ABCDEF\n');
    expect(() => ensureSecretFile('customerKey', file)).toThrow(`${file} does not hold a customerKey (64 lowercase hexadecimal characters)`);
    expect(readFileSync(file, 'utf8')).toBe('ABCDEF\n');
  });
});

describe("npm start's webhook secrets key file (KMS's part in AWS)", () => {
  it('is made once, 32 random bytes in a file of mode 0600 in a fresh directory, then kept, and tightened to 0600 when wider', () => {
    const file = join(directory, 'fresh', 'webhook-secrets-key');
    const made = ensureSecretFile('webhookSecrets', file);
    expect(made.state).toBe('created');
    expect(made.value).toMatch(/^[0-9a-f]{64}$/);
    expect(mode(file)).toBe('600');
    chmodSync(file, 0o664);
    expect(ensureSecretFile('webhookSecrets', file)).toEqual({ value: made.value, state: 'kept' });
    expect(mode(file)).toBe('600');
  });

  it('is refused, and left as it is, when it holds something else: the stored signing secrets would no longer open', () => {
    const file = join(directory, 'damaged-webhook-key');
    writeFileSync(file, 'not a key\n');
    expect(() => ensureSecretFile('webhookSecrets', file)).toThrow(
      `${file} does not hold a webhookSecrets (64 lowercase hexadecimal characters). Put back the one it held; or delete the file to have a new one made, knowing that every webhook signing secret stored with the old one can no longer be read: rotate each endpoint.`,
    );
    expect(readFileSync(file, 'utf8')).toBe('not a key\n');
  });
});

describe('the local stack', () => {
  it('hands the functions each value in its variable, and refuses a value of another form', () => {
    const values = randomSecrets();
    expect(secretEnvironment(values)).toEqual({
      TILLGATE_CUSTOMER_KEY: values.customerKey,
      TILLGATE_CURSOR_KEY: values.cursorKey,
      TILLGATE_WEBHOOK_SECRETS_KEY: values.webhookSecrets,
    });
    expect(randomSecrets().customerKey).not.toBe(values.customerKey);
    expect(randomSecrets().webhookSecrets).not.toBe(values.webhookSecrets);
    expect(() => secretEnvironment({ ...values, customerKey: 'short' })).toThrow('The local customerKey must be 64 lowercase hexadecimal characters');
    expect(() => secretEnvironment({ ...values, webhookSecrets: 'short' })).toThrow('The local webhookSecrets must be 64 lowercase hexadecimal characters');
  });

  it('refuses to make up a key for a database that outlives it', async () => {
    const message = 'startLocalStack: a database that outlives the stack needs the secrets it was used with (options.secrets)';
    await expect(startLocalStack({ tablePrefix: 'never-', dynamodb: { endpoint: 'http://127.0.0.1:9' }, api: false })).rejects.toThrow(message);
    await expect(startLocalStack({ tablePrefix: 'never-', dynamodb: { dataDirectory: directory }, api: false })).rejects.toThrow(message);
  });
});
