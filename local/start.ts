import path from 'node:path';
import { ensureTables, tableEnvironment, tableNamesWithPrefix } from './dynamodb.ts';
import { superviseDynamoDbLocal, type SupervisedDynamoDb } from './dynamodb-supervisor.ts';
import { localSettings } from './settings.ts';
import { sourceHandlers, startLocalApi } from './server.ts';
import { sourceWorkers, startLocalWebhooks } from './webhooks.ts';

/**
 * `npm start`: DynamoDB Local with its data in .local/ (kept across restarts, and restarted if it
 * dies: see dynamodb-supervisor.ts), the tables, a development account with a token, and both
 * hosts serving the Lambda handlers.
 */
const settings = localSettings();
const names = tableNamesWithPrefix(settings.tablePrefix);

/** Creates missing tables: at the first start, and after a restart that lost them. */
async function tablesReady(endpoint: string) {
  const created = await ensureTables(endpoint, names);
  if (created.length > 0) console.log(`Created tables: ${created.map((id) => names[id]).join(', ')}`);
}

let dynamodb: SupervisedDynamoDb | undefined;
if (!settings.externalEndpoint) {
  console.log(`Starting DynamoDB Local on port ${settings.dynamoDbPort} (data in ${settings.dataDirectory}) …`);
  dynamodb = await superviseDynamoDbLocal({
    port: settings.dynamoDbPort,
    dataDirectory: settings.dataDirectory,
    log: (line) => console.log(line),
    onStart: tablesReady,
    onGiveUp: (error) => {
      console.error(`\nDynamoDB Local cannot be restarted (${error.message}); stopping.`);
      // `api` may not exist yet if this happens while starting up.
      void Promise.resolve()
        .then(() => api.close())
        .catch(() => undefined)
        .finally(() => process.exit(1));
    },
  }).catch((error: Error) => {
    console.error(`\n${error.message}`);
    process.exit(1);
  });
} else {
  await tablesReady(settings.endpoint);
}

Object.assign(process.env, tableEnvironment(names), {
  DYNAMODB_ENDPOINT: settings.endpoint,
  POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
  // Locally a revoked token stops at once; in AWS the default cache is 30 seconds.
  TOKEN_CACHE_SECONDS: process.env.TOKEN_CACHE_SECONDS ?? '0',
  // Only the local stack accepts http:// and loopback webhook URLs (functions/webhooks/rules.ts).
  TILLGATE_LOCAL_WEBHOOKS: 'true',
});

// Imported only now: data-access modules read their table names when they load.
const { ensureDevelopmentToken } = await import('./dev-token.ts');
const tokenState = await ensureDevelopmentToken(settings.devTokenFile, settings.devAccountId);

const api = await startLocalApi({
  ports: { core: settings.corePort, pos: settings.posPort },
  loadHandler: sourceHandlers,
}).catch(async (error: NodeJS.ErrnoException) => {
  await dynamodb?.stop();
  if (error.code === 'EADDRINUSE') {
    console.error(`Port ${(error as { port?: number }).port ?? ''} is already in use: set CORE_PORT / POS_PORT to free ones.`);
    process.exit(1);
  }
  throw error;
});

// Webhooks: DynamoDB Local's stream drives the fan-out, in-process queues the sender and the
// forwarder; what they still hold when the stack stops is kept beside the data for the next run.
const webhooks = await startLocalWebhooks({
  endpoint: settings.endpoint,
  tableNames: names,
  loadWorker: sourceWorkers,
  stateFile: path.join(settings.dataDirectory, 'webhook-queues.json'),
});

console.log(`
tillgate is running locally.
  core host (v1.0): ${api.urls.core}
  pos host  (v2.0): ${api.urls.pos}
  DynamoDB:         ${settings.endpoint}${settings.externalEndpoint ? '' : ' (DynamoDB Local listens on every interface: firewall its port on a shared network)'}

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
  await api.close();
  await webhooks.close();
  await dynamodb?.stop();
  console.log('Stopped.');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

