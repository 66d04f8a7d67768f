import { ensureTables, startDynamoDbLocal, tableEnvironment, tableNamesWithPrefix, type RunningDynamoDb } from './dynamodb.ts';
import { localSettings } from './settings.ts';
import { sourceHandlers, startLocalApi } from './server.ts';

/**
 * `npm start`: DynamoDB Local with its data in .local/ (kept across restarts), the tables,
 * a development account with a token, and both hosts serving the Lambda handlers.
 */
const settings = localSettings();
const names = tableNamesWithPrefix(settings.tablePrefix);

let dynamodb: RunningDynamoDb | undefined;
if (!settings.externalEndpoint) {
  console.log(`Starting DynamoDB Local on port ${settings.dynamoDbPort} (data in ${settings.dataDirectory}) …`);
  dynamodb = await startDynamoDbLocal({ port: settings.dynamoDbPort, dataDirectory: settings.dataDirectory }).catch(
    (error: Error) => {
      console.error(`\n${error.message}`);
      process.exit(1);
    },
  );
}
const created = await ensureTables(settings.endpoint, names);
if (created.length > 0) console.log(`Created tables: ${created.map((id) => names[id]).join(', ')}`);

Object.assign(process.env, tableEnvironment(names), {
  DYNAMODB_ENDPOINT: settings.endpoint,
  POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
  // Locally a revoked token stops at once; in AWS the default cache is 30 seconds.
  TOKEN_CACHE_SECONDS: process.env.TOKEN_CACHE_SECONDS ?? '0',
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

console.log(`
tillgate is running locally.
  core host (v1.0): ${api.urls.core}
  pos host  (v2.0): ${api.urls.pos}
  DynamoDB:         ${settings.endpoint}

Development account ${settings.devAccountId}: token ${tokenState} in ${settings.devTokenFile}. Use it with:
  export TOKEN=$(cat ${settings.devTokenFile})
  curl -s ${api.urls.core}/v1.0/events/1 -H "X-Auth-Token: $TOKEN"

One JSON log line per request follows. Ctrl-C stops everything.
`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping …`);
  await api.close();
  await dynamodb?.stop();
  console.log('Stopped.');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
dynamodb?.exited.then(async (code) => {
  // A Ctrl-C reaches DynamoDB Local (same process group) as well as us: let our handler win.
  await new Promise((r) => setTimeout(r, 500));
  if (!stopping) {
    console.error(`DynamoDB Local exited unexpectedly (code ${code}); stopping.`);
    void api.close().then(() => process.exit(1));
  }
});

