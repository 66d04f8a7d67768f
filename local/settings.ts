/**
 * Settings of the local stack, from the environment, shared by `npm start` and the token tool.
 * Every one has a default, so a fresh clone needs none of them.
 */
function port(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    throw new Error(`${name} must be a TCP port number, got "${raw}"`);
  }
  return value;
}

export function localSettings() {
  const dynamoDbPort = port('DYNAMODB_PORT', 8000);
  return {
    corePort: port('CORE_PORT', 3000),
    posPort: port('POS_PORT', 3001),
    dynamoDbPort,
    /** The S3-compatible server (local/s3.ts): exports' files, presigned URLs on 127.0.0.1. */
    s3Port: port('S3_PORT', 4568),
    s3DataDirectory: process.env.TILLGATE_S3_DATA_DIR || '.local/s3',
    /** An external DynamoDB (another DynamoDB Local, say); when set, none is started. */
    externalEndpoint: process.env.DYNAMODB_ENDPOINT || undefined,
    endpoint: process.env.DYNAMODB_ENDPOINT || `http://127.0.0.1:${dynamoDbPort}`,
    dataDirectory: process.env.TILLGATE_DATA_DIR || '.local/dynamodb',
    tablePrefix: process.env.TABLE_PREFIX || 'tillgate-local-',
    devTokenFile: process.env.TILLGATE_DEV_TOKEN_FILE || '.local/dev-token',
    /** The key of the customer ids' hashes (functions/secrets.ts): Secrets Manager's part in AWS. */
    customerKeyFile: process.env.TILLGATE_CUSTOMER_KEY_FILE || '.local/customer-key',
    /** The key that wraps the webhook signing secrets' data keys (functions/secrets.ts, `keys`): KMS's part in AWS. */
    webhookSecretsKeyFile: process.env.TILLGATE_WEBHOOK_SECRETS_KEY_FILE || '.local/webhook-secrets-key',
    /** The key of the list cursors (functions/secrets.ts): Secrets Manager's part in AWS. */
    cursorKeyFile: process.env.TILLGATE_CURSOR_KEY_FILE || '.local/cursor-key',
    devAccountId: 1,
  };
}
