import path from 'node:path';
import { ensureSecretFile, type LocalValueId } from './secrets.ts';
import { localSettings } from './settings.ts';
import { startLocalStack, type LocalStack } from './stack.ts';

/**
 * `npm start`: the local stack (stack.ts) with DynamoDB Local's data in .local/ (kept across
 * restarts, and restarted if it dies: see dynamodb-supervisor.ts), a development account with a
 * token, and both hosts serving the Lambda handlers on CORE_PORT and POS_PORT.
 */
const settings = localSettings();

// Made once and kept (mode 0600): a new customer key would change the hash of every customer id
// stored, a new webhook secrets key would leave every stored signing secret unreadable, a new cursor
// key would refuse the list cursors handed out before it.
const secretFile = (id: LocalValueId, file: string) => {
  try {
    return ensureSecretFile(id, file);
  } catch (error) {
    console.error(`\n${(error as Error).message}`);
    process.exit(1);
  }
};
const customerKey = secretFile('customerKey', settings.customerKeyFile);
const cursorKey = secretFile('cursorKey', settings.cursorKeyFile);
const webhookSecretsKey = secretFile('webhookSecrets', settings.webhookSecretsKeyFile);

// Everything npm start writes under .local/ is the owner's only (0600 files, 0700 directories):
// DynamoDB Local's files, the S3 server's objects, the key files.
process.umask(0o077);

let stack: LocalStack | undefined;
if (!settings.externalEndpoint) {
  console.log(`Starting DynamoDB Local on port ${settings.dynamoDbPort} (data in ${settings.dataDirectory}) …`);
}
stack = await startLocalStack({
  dynamodb: settings.externalEndpoint
    ? { endpoint: settings.externalEndpoint }
    : {
        port: settings.dynamoDbPort,
        dataDirectory: settings.dataDirectory,
        supervise: {
          log: (line) => console.log(line),
          onGiveUp: (error) => {
            console.error(`\nDynamoDB Local cannot be restarted (${error.message}); stopping.`);
            // `stack` may not exist yet if this happens while starting up.
            void Promise.resolve()
              .then(() => stack?.stop())
              .catch(() => undefined)
              .finally(() => process.exit(1));
          },
        },
      },
  tablePrefix: settings.tablePrefix,
  s3: { port: settings.s3Port, dataDirectory: settings.s3DataDirectory },
  secrets: { customerKey: customerKey.value, cursorKey: cursorKey.value, webhookSecrets: webhookSecretsKey.value },
  onTablesCreated: (names) => console.log(`Created tables: ${names.join(', ')}`),
  environment: {
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    // Locally a revoked token stops at once; in AWS the default cache is 30 seconds.
    TOKEN_CACHE_SECONDS: process.env.TOKEN_CACHE_SECONDS ?? '0',
    // Only the local stack accepts http:// and loopback webhook URLs (functions/webhooks/rules.ts).
    TILLGATE_LOCAL_WEBHOOKS: 'true',
  },
  api: { ports: { core: settings.corePort, pos: settings.posPort } },
  // Webhooks: DynamoDB Local's stream drives the fan-out, in-process queues (behind a local SQS
  // endpoint) the sender and the forwarder; what they still hold when the stack stops is kept
  // beside the data for the next run.
  webhooks: { stateFile: path.join(settings.dataDirectory, 'webhook-queues.json') },
}).catch((error: NodeJS.ErrnoException) => {
  if (error.code === 'EADDRINUSE') {
    console.error(`Port ${(error as { port?: number }).port ?? ''} is already in use: set CORE_PORT / POS_PORT / S3_PORT to free ones.`);
  } else {
    console.error(`\n${error.message}`);
  }
  process.exit(1);
});
const api = stack.api!;

// Imported only now: data-access modules read their table names when they load.
const { ensureDevelopmentToken } = await import('./dev-token.ts');
const tokenState = await ensureDevelopmentToken(settings.devTokenFile, settings.devAccountId);
// Issuance jobs a killed process left running go on where their progress in DynamoDB stands.
const { resumeIssuanceJobs } = await import('./issuance-jobs.ts');
await resumeIssuanceJobs((line) => console.log(line));

console.log(`
tillgate is running locally.
  core host (v1.0): ${api.urls.core}
  pos host  (v2.0): ${api.urls.pos}
  DynamoDB:         ${settings.endpoint}${settings.externalEndpoint ? '' : ' (DynamoDB Local listens on every interface: firewall its port on a shared network)'}
  S3 (exports):     ${stack.s3!.endpoint} (S3_PORT; its data in ${settings.s3DataDirectory}; presigned URLs only)

Customer ids are hashed with the key ${customerKey.state} in ${settings.customerKeyFile} (never printed).
Webhook signing secrets are stored encrypted with the key ${webhookSecretsKey.state} in ${settings.webhookSecretsKeyFile} (never printed).
Development account ${settings.devAccountId}: token ${tokenState} in ${settings.devTokenFile}. Use it with:
  export TOKEN=$(cat ${settings.devTokenFile})
  curl -si ${api.urls.core}/v1.0/events -H "X-Auth-Token: $TOKEN"

That lists the account's events: 200, and an empty list on a fresh stack. README.md, "A day in
the life", goes on from there.

Webhooks are delivered from here too (http:// and loopback URLs accepted locally);
WEBHOOK_RETRY_SCHEDULE=1,1,1 shortens the retries (now ${process.env.WEBHOOK_RETRY_SCHEDULE || 'the default: 5 s … 24 h'}).

One JSON log line per request follows. If DynamoDB Local dies, it is restarted (logged here).
Ctrl-C stops everything.
`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping …`);
  await stack?.stop();
  console.log('Stopped.');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
