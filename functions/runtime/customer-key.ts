import { createHmac } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { hasSecretForm, secrets } from '#functions/secrets';
import { deadlineSignal } from './deadline.ts';

/**
 * A customer id (`transaction.customer_id`: a loyalty card or customer number) is personal data:
 * it is never logged, never returned, and stored only as the keyed hash made here, so that the
 * tables count a customer's uses without holding who the customer is, and a copy of the tables
 * without the key cannot be searched for a known card number (a plain hash of a short number
 * can be reversed by trying them all).
 *
 * The key (functions/secrets.ts, `customerKey`): in AWS a Secrets Manager secret the stack
 * generated, read once per execution environment; on the local stack its value, from the
 * environment. Which one is settled when the module loads (missing configuration fails the cold
 * start, as a missing table name does); a failure to read the secret answers 503, never 500.
 */
const spec = secrets.customerKey;
const { arnEnvVar, localEnvVar } = spec;

/**
 * The key could not be read (Secrets Manager refused, timed out or is unreachable, or the secret
 * is not of the key's form). Its name is one of the transient faults of functions/http/errors.ts:
 * the request answers 503 with Retry-After, and on-call sees this message (never the key) in the
 * request's log lines.
 */
export class CustomerKeyUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CustomerKeyUnavailableError';
  }
}

type KeySource = { readonly kind: 'local'; readonly key: Buffer } | { readonly kind: 'aws'; readonly arn: string };

function keySource(): KeySource {
  const value = process.env[localEnvVar];
  const arn = process.env[arnEnvVar];
  if (value && arn) throw new Error(`Set ${arnEnvVar} (AWS) or ${localEnvVar} (the local stack), not both`);
  if (arn) return { kind: 'aws', arn };
  if (!value) throw new Error(`Missing the customer key: ${arnEnvVar} (AWS) or ${localEnvVar} (the local stack) must be set`);
  // The message names the form only: the value is a secret.
  if (!hasSecretForm(spec, value)) throw new Error(`${localEnvVar} must be ${spec.bytes * 2} lowercase hexadecimal characters (${spec.bytes} bytes)`);
  return { kind: 'local', key: Buffer.from(value, 'hex') };
}

const source = keySource();

/** One client per execution environment, made at the first read (the local stack never makes one). */
let client: SecretsManagerClient | undefined;
/** The key, or the read in flight (callers at once share it); forgotten when it fails, so the next request tries again. */
let cached: Promise<Buffer> | undefined;

function customerKey(): Promise<Buffer> {
  if (source.kind === 'local') return Promise.resolve(source.key);
  cached ??= readSecret(source.arn).catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function readSecret(arn: string): Promise<Buffer> {
  client ??= new SecretsManagerClient({
    // As the DynamoDB client (clients.ts): a slow moment is retried, a hang is not waited out.
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 2000, throwOnRequestTimeout: true },
  });
  let value: string | undefined;
  try {
    // The invocation's deadline bounds the attempts and the back-off between them (deadline.ts).
    const signal = deadlineSignal();
    const answer = await client.send(new GetSecretValueCommand({ SecretId: arn }), signal ? { abortSignal: signal } : {});
    value = answer.SecretString;
  } catch (error) {
    const name = error instanceof Error ? error.name : 'an error';
    throw new CustomerKeyUnavailableError(`The customer key could not be read from Secrets Manager (${name})`, { cause: error });
  }
  if (value === undefined || !hasSecretForm(spec, value)) {
    throw new CustomerKeyUnavailableError(
      `The customer key secret is not ${spec.bytes * 2} lowercase hexadecimal characters: put a value of that form into it (docs/deploying.md, "The customer key")`,
    );
  }
  return Buffer.from(value, 'hex');
}

/**
 * The keyed hash that stands for `customerId` of account `accountId`: HMAC-SHA256 with the
 * customer key over the JSON text of `["customer", accountId, customerId]` (an encoding no two
 * different pairs share: JSON quotes the id and escapes what is inside it, lone surrogates
 * included), in base64url (43 characters). The id is taken exactly as sent, as site ids are; the
 * account is part of it, so one card number in two accounts is two customers.
 */
export async function customerHash(accountId: number, customerId: string): Promise<string> {
  if (!Number.isSafeInteger(accountId) || accountId < 0) throw new Error(`customerHash: account id ${accountId} is not an integer`);
  const key = await customerKey();
  return createHmac('sha256', key)
    .update(JSON.stringify(['customer', accountId, customerId]))
    .digest('base64url');
}
