import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { isTransientFault } from '../../../functions/http/errors.ts';
import codesRedemption from '../../../functions/http/schemas/codesRedemption.generated.ts';
import { secrets } from '../../../functions/secrets.ts';
import { newAccount } from '../../support/accounts.ts';
import { TEST_CUSTOMER_KEY } from '../../support/customer-key.ts';
import { invoke } from '../../support/invoke.ts';

/**
 * functions/runtime/customer-key.ts: the keyed hash that stands for a customer id, with the key
 * from the environment (the local stack, the tests) or from Secrets Manager (AWS), read once per
 * execution environment, a failure answering 503.
 */
const { arnEnvVar, localEnvVar } = secrets.customerKey;
const ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:SecretsCustomerKey-AbCdEf';
const OTHER_KEY = 'f'.repeat(64);

type CustomerKeyModule = typeof import('../../../functions/runtime/customer-key.ts');

/** A fresh copy of the module, as a new execution environment loads it, with this environment. */
async function load(environment: Record<string, string | undefined>): Promise<CustomerKeyModule> {
  vi.resetModules();
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  return import('../../../functions/runtime/customer-key.ts');
}

/** What the hash must be, computed here from its definition. */
const expected = (key: string, accountId: number, customerId: string) =>
  createHmac('sha256', Buffer.from(key, 'hex'))
    .update(JSON.stringify(['customer', accountId, customerId]))
    .digest('base64url');

const saved = { local: process.env[localEnvVar], arn: process.env[arnEnvVar] };
afterEach(() => {
  vi.restoreAllMocks();
  for (const [name, value] of [
    [localEnvVar, saved.local],
    [arnEnvVar, saved.arn],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('with the local key (the local stack, the tests)', () => {
  let module: CustomerKeyModule;
  beforeEach(async () => {
    module = await load({});
  });

  it("is the test run's fixed key, handed over by the global setup as the local stack hands it to the functions", () => {
    expect(process.env[localEnvVar]).toBe(TEST_CUSTOMER_KEY);
    expect(process.env[arnEnvVar]).toBeUndefined();
  });

  it('is HMAC-SHA256 with the key over the JSON text of ["customer", account, id], in base64url', async () => {
    const hash = await module.customerHash(42, 'LOYALTY-0042');
    expect(hash).toBe(expected(TEST_CUSTOMER_KEY, 42, 'LOYALTY-0042'));
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await module.customerHash(42, 'LOYALTY-0042')).toBe(hash);
  });

  it('tells apart every two (account, id) pairs, however their texts run together', async () => {
    const pairs: [number, string][] = [
      [1, '23'],
      [12, '3'],
      [123, ''],
      [1, '2,3'],
      [1, '"2"'],
      [1, 'card'],
      [2, 'card'],
      [1, 'CARD'],
      [1, 'card '],
      [1, '\ud800'],
      [1, '\udc00'],
      [1, '\ufffd'],
      [1, '\ud800\udc00'],
      [1, 'a\u0000b'],
      [1, 'a\\u0000b'],
    ];
    const hashes = await Promise.all(pairs.map(([account, id]) => module.customerHash(account, id)));
    expect(new Set(hashes).size).toBe(pairs.length);
  });

  it('refuses an account id that is not an integer (a bug, not a customer)', async () => {
    await expect(module.customerHash(1.5, 'card')).rejects.toThrow('customerHash: account id 1.5 is not an integer');
  });

  it('fails the cold start, naming the variables but not the value, without a key or with one of another form', async () => {
    await expect(load({ [localEnvVar]: undefined, [arnEnvVar]: undefined })).rejects.toThrow(
      `Missing the customer key: ${arnEnvVar} (AWS) or ${localEnvVar} (the local stack) must be set`,
    );
    const wrong = 'not-hexadecimal-0123456789';
    const failure = load({ [localEnvVar]: wrong });
    await expect(failure).rejects.toThrow(`${localEnvVar} must be 64 lowercase hexadecimal characters (32 bytes)`);
    await expect(failure).rejects.not.toThrow(wrong);
    await expect(load({ [localEnvVar]: TEST_CUSTOMER_KEY, [arnEnvVar]: ARN })).rejects.toThrow('not both');
  });
});

describe('with the key in Secrets Manager (AWS)', () => {
  const inAws = () => load({ [localEnvVar]: undefined, [arnEnvVar]: ARN });

  it('reads the secret named by its ARN once per execution environment, whatever the number of requests', async () => {
    const send = vi.spyOn(SecretsManagerClient.prototype, 'send').mockImplementation((async () => ({ SecretString: OTHER_KEY })) as never);
    const module = await inAws();
    const hashes = await Promise.all([module.customerHash(7, 'a'), module.customerHash(7, 'b')]);
    expect(await module.customerHash(7, 'a')).toBe(hashes[0]);
    expect(hashes).toEqual([expected(OTHER_KEY, 7, 'a'), expected(OTHER_KEY, 7, 'b')]);
    expect(send).toHaveBeenCalledTimes(1);
    const [command] = send.mock.calls[0]!;
    expect(command).toBeInstanceOf(GetSecretValueCommand);
    expect((command as GetSecretValueCommand).input).toEqual({ SecretId: ARN });
  });

  it('fails with a transient fault (503) when it cannot be read, and tries again at the next request', async () => {
    const denied = Object.assign(new Error('User is not authorized to perform: secretsmanager:GetSecretValue'), { name: 'AccessDeniedException' });
    const send = vi
      .spyOn(SecretsManagerClient.prototype, 'send')
      .mockImplementationOnce((async () => {
        throw denied;
      }) as never)
      .mockImplementation((async () => ({ SecretString: OTHER_KEY })) as never);
    const module = await inAws();
    const failure = await module.customerHash(7, 'a').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(module.CustomerKeyUnavailableError);
    expect((failure as Error).message).toBe('The customer key could not be read from Secrets Manager (AccessDeniedException)');
    expect((failure as Error).cause).toBe(denied);
    expect(isTransientFault(failure)).toBe(true);
    expect(await module.customerHash(7, 'a')).toBe(expected(OTHER_KEY, 7, 'a'));
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('fails with a transient fault, never showing the value, when the secret is not of the key form', async () => {
    const pasted = '{"key":"Hunter2-not-a-key"}';
    vi.spyOn(SecretsManagerClient.prototype, 'send').mockImplementation((async () => ({ SecretString: pasted })) as never);
    const module = await inAws();
    const failure = (await module.customerHash(7, 'a').catch((error: unknown) => error)) as Error;
    expect(failure).toBeInstanceOf(module.CustomerKeyUnavailableError);
    expect(failure.message).toContain('The customer key secret is not 64 lowercase hexadecimal characters');
    expect(failure.message).not.toContain('Hunter2');
    expect(isTransientFault(failure)).toBe(true);
  });

  it("answers 503 with Retry-After and the till's text through the chain of a till route, never 500", async () => {
    vi.spyOn(SecretsManagerClient.prototype, 'send').mockImplementation((async () => {
      throw Object.assign(new Error('Secrets Manager did not answer'), { name: 'TimeoutError' });
    }) as never);
    const module = await inAws();
    const { api } = await import('../../../functions/http/chain.ts');
    // The route's chain as its handler builds it, with a handler that needs the key first.
    const handler = api({ host: 'pos', operationId: 'validateCodes', body: codesRedemption }).handler(async (_, context) => {
      await module.customerHash(context.accountId, 'LOYALTY-1');
      return { statusCode: 200, body: {} };
    });
    const account = await newAccount();
    const response = await invoke(handler, 'validateCodes', '/v2.0/validated_codes', {
      headers: { 'X-Auth-Token': account.token },
      body: { transaction: { site_id: 'S-1', pos_transaction_id: 'T-1', codes: ['WIN-1'] } },
    });
    expect(response.statusCode).toBe(503);
    expect(response.headers['Retry-After']).toBe('1');
    const { transaction } = JSON.parse(response.body);
    expect(transaction.errors).toEqual([{ message: 'The service is temporarily unavailable; retry after the Retry-After delay' }]);
    expect(transaction.display_messages[0].message).toMatch(/^Checking codes is temporarily unavailable\. Wait a moment and try again/);
  });
});
