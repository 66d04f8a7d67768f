import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { hasSecretForm, secrets, type SecretId, type SecretSpec } from '#functions/secrets';
import { deadlineSignal } from './deadline.ts';

/**
 * A key of functions/secrets.ts as a function reads it: in AWS from Secrets Manager (the ARN in
 * the secret's `arnEnvVar`), read at the first use and kept for the life of the execution
 * environment; on the local stack its value, from `localEnvVar`. Which one is settled when the
 * reader is made (missing configuration throws there); a failure to read the secret throws
 * `unavailable`'s error (an error name of functions/http/errors.ts's transient faults: 503), and
 * the next call tries again. Messages name the secret and its form, never its value.
 */
export function secretKeyReader(
  id: SecretId,
  what: string,
  unavailable: (message: string, options?: ErrorOptions) => Error,
  /** Where the operator reads how to put a value into the secret. */
  howToFix: string,
): () => Promise<Buffer> {
  const spec: SecretSpec = secrets[id];
  const { arnEnvVar, localEnvVar } = spec;
  const value = process.env[localEnvVar];
  const arn = process.env[arnEnvVar];
  if (value && arn) throw new Error(`Set ${arnEnvVar} (AWS) or ${localEnvVar} (the local stack), not both`);
  if (!arn) {
    if (!value) throw new Error(`Missing the ${what}: ${arnEnvVar} (AWS) or ${localEnvVar} (the local stack) must be set`);
    // The message names the form only: the value is a secret.
    if (!hasSecretForm(spec, value)) throw new Error(`${localEnvVar} must be ${spec.bytes * 2} lowercase hexadecimal characters (${spec.bytes} bytes)`);
    const key = Buffer.from(value, 'hex');
    return () => Promise.resolve(key);
  }

  /** One client per execution environment, made at the first read. */
  let client: SecretsManagerClient | undefined;
  /** The key, or the read in flight (callers at once share it); forgotten when it fails. */
  let cached: Promise<Buffer> | undefined;
  const read = async (): Promise<Buffer> => {
    client ??= new SecretsManagerClient({
      // As the DynamoDB client (clients.ts): a slow moment is retried, a hang is not waited out.
      maxAttempts: 3,
      requestHandler: { connectionTimeout: 1000, requestTimeout: 2000, throwOnRequestTimeout: true },
    });
    let secret: string | undefined;
    try {
      // The invocation's deadline bounds the attempts and the back-off between them (deadline.ts).
      const signal = deadlineSignal();
      const answer = await client.send(new GetSecretValueCommand({ SecretId: arn }), signal ? { abortSignal: signal } : {});
      secret = answer.SecretString;
    } catch (error) {
      const name = error instanceof Error ? error.name : 'an error';
      throw unavailable(`The ${what} could not be read from Secrets Manager (${name})`, { cause: error });
    }
    if (secret === undefined || !hasSecretForm(spec, secret)) {
      throw unavailable(`The ${what} secret is not ${spec.bytes * 2} lowercase hexadecimal characters: put a value of that form into it (${howToFix})`);
    }
    return Buffer.from(secret, 'hex');
  };
  return () => {
    cached ??= read().catch((error: unknown) => {
      cached = undefined;
      throw error;
    });
    return cached;
  };
}
