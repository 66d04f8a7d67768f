import { freePort } from '../../../local/dynamodb.ts';
import { randomSecrets } from '../../../local/secrets.ts';
import { startLocalStack } from '../../../local/stack.ts';

/**
 * The soak's stack (soak.test.ts) in a process of its own, booted as `npm start` boots it
 * (local/start.ts, through the same startLocalStack): DynamoDB Local with its data on disk in
 * SOAK_DATA_DIR, supervised (restarted on the same port and data when it dies, with the same
 * back-off and log lines), both hosts, and the webhook stand-ins (the stream reader, the queues,
 * the SQS endpoint) with the source handlers. What differs is timing only, as in every webhook
 * test: a failed queue message comes back after SOAK_VISIBILITY_MS (default 1000) instead of
 * 180 s, up to SOAK_MAX_RECEIVES times (default: each trigger's maxReceiveCount), and the test sets WEBHOOK_RETRY_SCHEDULE, WEBHOOK_TIMEOUT_MS and WEBHOOK_LEASE_SECONDS
 * in the environment, so a run needs seconds, not hours.
 *
 * Prints one JSON line per fact on stdout: `{"ready":{…}}` once (the hosts, DynamoDB's endpoint and
 * table prefix, and SOAK_ACCOUNTS fresh accounts with a token each), `{"supervisor":"…"}` for each
 * line the supervisor logs (the pids to kill are there), `{"webhooks":"…"}` for each line the
 * stand-ins log. Serves until SIGTERM.
 */
const dataDirectory = process.env.SOAK_DATA_DIR;
if (!dataDirectory) throw new Error('SOAK_DATA_DIR is required');
const print = (fact: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(fact)}\n`);

const tablePrefix = 'soak-';
const stack = await startLocalStack({
  dynamodb: {
    port: await freePort(),
    dataDirectory,
    supervise: {
      log: (line) => print({ supervisor: line }),
      onGiveUp: (error) => {
        print({ supervisor: `gave up: ${error.message}` });
        process.exit(1);
      },
    },
  },
  tablePrefix,
  // A fresh data directory each run: fresh keys are right for it.
  secrets: randomSecrets(),
  environment: { POWERTOOLS_METRICS_DISABLED: 'true', TOKEN_CACHE_SECONDS: '0', TILLGATE_LOCAL_WEBHOOKS: 'true' },
  api: { log: () => undefined },
  webhooks: {
    visibilityMs: Number(process.env.SOAK_VISIBILITY_MS ?? 1000),
    ...(process.env.SOAK_MAX_RECEIVES ? { maxReceiveCount: Number(process.env.SOAK_MAX_RECEIVES) } : {}),
    log: (line) => print({ webhooks: line }),
  },
});

// Imported only now: data-access modules read their table names when they load.
const { issueToken } = await import('../../../functions/http/tokens.ts');
const accounts = await Promise.all(
  Array.from({ length: Number(process.env.SOAK_ACCOUNTS ?? 3) }, async (_, i) => {
    const accountId = 700_000 + i;
    return { accountId, token: (await issueToken(accountId, `soak ${i}`, 'all')).token };
  }),
);
print({ ready: { urls: stack.api!.urls, dynamodb: stack.dynamodbEndpoint, tablePrefix, accounts } });
process.on('SIGTERM', () => void stack.stop().then(() => process.exit(0)));
