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
export function hasSecretForm(spec: SecretSpec, value: string): boolean {
  return value.length === spec.bytes * 2 && /^[0-9a-f]*$/.test(value);
}
