import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureSecretFile, randomSecrets, secretEnvironment } from '../../../local/secrets.ts';
import { startLocalStack } from '../../../local/stack.ts';

/**
 * The local stand-in for Secrets Manager: `npm start` keeps the customer key in a file under
 * .local/ (git-ignored), made once with 32 random bytes, the owner's only (0600), and hands it to
 * the functions in TILLGATE_CUSTOMER_KEY.
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

describe('the local stack', () => {
  it('hands the functions each value in its variable, and refuses a value of another form', () => {
    const values = randomSecrets();
    expect(secretEnvironment(values)).toEqual({ TILLGATE_CUSTOMER_KEY: values.customerKey, TILLGATE_CURSOR_KEY: values.cursorKey });
    expect(randomSecrets().customerKey).not.toBe(values.customerKey);
    expect(() => secretEnvironment({ customerKey: 'short', cursorKey: values.cursorKey })).toThrow(
      'The local customerKey must be 64 lowercase hexadecimal characters',
    );
  });

  it('refuses to make up a key for a database that outlives it', async () => {
    const message = 'startLocalStack: a database that outlives the stack needs the secrets it was used with (options.secrets)';
    await expect(startLocalStack({ tablePrefix: 'never-', dynamodb: { endpoint: 'http://127.0.0.1:9' }, api: false })).rejects.toThrow(message);
    await expect(startLocalStack({ tablePrefix: 'never-', dynamodb: { dataDirectory: directory }, api: false })).rejects.toThrow(message);
  });
});
