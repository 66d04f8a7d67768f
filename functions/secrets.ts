/**
 * Every secret the functions read, declared once (as queues.ts declares the queues). The CDK stack
 * creates each in Secrets Manager with a value Secrets Manager generates (never in the template or
 * the repository), grants `secretsmanager:GetSecretValue` on it, and nothing else, to the routes
 * that name it (`secrets` in functions/routes.ts), and hands them its ARN in `arnEnvVar`. The
 * local stack has no Secrets Manager: it hands the functions the value itself in `localEnvVar`
 * (`npm start` from a file under .local/, the tests a fixed one: local/secrets.ts).
 */
export interface SecretSpec {
  /** Environment variable through which a function in AWS learns the secret's ARN. */
  readonly arnEnvVar: string;
  /** Environment variable carrying the value itself on the local stack (never set in AWS). */
  readonly localEnvVar: string;
  /** The value: this many random bytes, written as twice as many lowercase hexadecimal characters. */
  readonly bytes: number;
  /**
   * A manual rotation: after putting a new value into the secret, the operator deploys with
   * `-c <context>=<label>`; the label reaches the functions that read the secret in `envVar`, so
   * that every one of them starts afresh and reads the new value (they keep it for the life of an
   * execution environment). docs/deploying.md, "The customer key".
   */
  readonly rotation: {
    readonly context: string;
    readonly envVar: string;
    /** Why Secrets Manager does not rotate it on a schedule (the stack acknowledges cdk-nag's AwsSolutions-SMG4 with it). */
    readonly whyManual: string;
  };
  readonly description: string;
}

export const secrets = {
  customerKey: {
    arnEnvVar: 'CUSTOMER_KEY_SECRET_ARN',
    localEnvVar: 'TILLGATE_CUSTOMER_KEY',
    bytes: 32,
    rotation: {
      context: 'customerKeyRotation',
      envVar: 'CUSTOMER_KEY_ROTATION',
      whyManual:
        'A new customer key changes the hash of every customer id, so every per-customer limit starts counting afresh: ' +
        'an operator decides when that is worth it and rotates by hand (docs/deploying.md, "The customer key").',
    },
    description:
      'The key of the hashes that stand for customer ids (transaction.customer_id): 32 random bytes as 64 hexadecimal ' +
      'characters. A new value changes every stored hash: per-customer limits start counting afresh (docs/security.md).',
  },
  cursorKey: {
    arnEnvVar: 'CURSOR_KEY_SECRET_ARN',
    localEnvVar: 'TILLGATE_CURSOR_KEY',
    bytes: 32,
    rotation: {
      context: 'cursorKeyRotation',
      envVar: 'CURSOR_KEY_ROTATION',
      whyManual:
        'A new cursor key makes every list cursor handed out before it answer 400 (a client starts its list again): ' +
        'an operator rotates it by hand when it may have leaked (docs/security.md, "List cursors").',
    },
    description:
      'The key that encrypts and authenticates list cursors (AES-256-GCM): 32 random bytes as 64 hexadecimal characters. ' +
      'A new value makes the cursors handed out before it answer 400 (docs/security.md).',
  },
} as const satisfies Record<string, SecretSpec>;

export type SecretId = keyof typeof secrets;

export const secretIds = Object.keys(secrets) as SecretId[];

/** Whether `value` has the form of the secret: exactly `bytes` bytes in lowercase hexadecimal. */
export function hasSecretForm(spec: Pick<SecretSpec, 'bytes'>, value: string): boolean {
  return value.length === spec.bytes * 2 && /^[0-9a-f]*$/.test(value);
}

/**
 * Keys that encrypt what the tables hold (envelope encryption, functions/runtime/envelope.ts),
 * declared once as the secrets above are. In AWS each is a customer-managed KMS key the CDK stack
 * creates (infra/constructs/keys.ts): a function gets its ARN in `arnEnvVar` and exactly the KMS
 * actions its row names (`keys` in functions/routes.ts and functions/workers.ts), in its role and
 * in the key's policy. The local stack has no KMS: it hands the functions a key of `bytes` random
 * bytes in `localEnvVar` (`npm start` from a file under .local/, local/secrets.ts), which wraps
 * the data keys as KMS would; the data-key code is the same in both.
 */
export interface KeySpec {
  /** Environment variable through which a function in AWS learns the KMS key's ARN. */
  readonly arnEnvVar: string;
  /** Environment variable carrying the local stand-in's key itself (never set in AWS). */
  readonly localEnvVar: string;
  /** The local key: this many random bytes, in lowercase hexadecimal. */
  readonly bytes: number;
  /**
   * The KMS encryption context of every data key made with it: the key policy allows its use with
   * this context only, so the key cannot be spent on anything else.
   */
  readonly encryptionContext: Readonly<Record<string, string>>;
  readonly description: string;
  /** What replacing the local key file costs (its error message says it). */
  readonly ifReplaced: string;
}

/**
 * The KMS actions a function may take with a key: exactly the calls its code makes.
 * GenerateDataKey encrypts only (it returns a new data key and that key encrypted); Decrypt is
 * what reads what was encrypted.
 */
export type KmsAction = 'GenerateDataKey' | 'Decrypt';

export const keys = {
  webhookSecrets: {
    arnEnvVar: 'WEBHOOK_SECRETS_KEY_ARN',
    localEnvVar: 'TILLGATE_WEBHOOK_SECRETS_KEY',
    bytes: 32,
    encryptionContext: { 'tillgate:use': 'webhook-signing-secrets' },
    description:
      'Encrypts the data keys that encrypt the webhook signing secrets (the webhookSecrets table): ' +
      'the routes that make or rotate a secret generate data keys with it, only the sender decrypts (docs/security.md).',
    ifReplaced: 'every webhook signing secret stored with the old one can no longer be read: rotate each endpoint',
  },
} as const satisfies Record<string, KeySpec>;

export type KeyId = keyof typeof keys;

export const keyIds = Object.keys(keys) as KeyId[];
