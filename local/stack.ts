import { ensureTables, startDynamoDbLocal, freePort, tableEnvironment, tableNamesWithPrefix, type TableNames } from './dynamodb.ts';
import { superviseDynamoDbLocal } from './dynamodb-supervisor.ts';
import { startLocalS3, type LocalS3 } from './s3.ts';
import { randomSecrets, secretEnvironment, type SecretValues } from './secrets.ts';
import { sourceHandlers, startLocalApi, type HandlerLoader, type LocalApi } from './server.ts';
import { sourceWorkers, startLocalWebhooks, type LocalWebhookOptions, type LocalWebhooks } from './webhooks.ts';

/**
 * The one boot of the local stack, for `npm start` (start.ts), the tests (test/support/global-setup.ts),
 * the bench, the load run and the probes (scripts/): in this order,
 * 1. DynamoDB: the one at `dynamodb.endpoint` (DYNAMODB_ENDPOINT), or DynamoDB Local started on
 *    `dynamodb.port` (default a free one), in memory or with its data in `dynamodb.dataDirectory`,
 *    and kept running (restarted when it dies) with `dynamodb.supervise`;
 * 2. the tables of functions/tables.ts, named with `tablePrefix` (created when missing, again
 *    after every restart of a supervised DynamoDB Local);
 * 3. the environment the functions read (their tables, DYNAMODB_ENDPOINT, the values of the
 *    secrets of functions/secrets.ts, the caller's `environment`), set before any handler module
 *    loads, since data modules read their table names when they load;
 * 4. the S3-compatible server (s3.ts) with the buckets of functions/buckets.ts, unless `s3` is
 *    false: on `s3.port` (default a free one), its data in `s3.dataDirectory` (default a
 *    temporary directory removed when it stops);
 * 5. both hosts' servers (server.ts), unless `api` is false;
 * 6. the webhook stand-ins (webhooks.ts: the stream reader, the queues and their SQS endpoint),
 *    when `webhooks` is given.
 * stop() undoes it in reverse. What differs between callers is an option here, not a copy of
 * the boot.
 */
interface LocalStackOptions {
  readonly dynamodb?:
    | { readonly endpoint: string }
    | {
        readonly port?: number;
        /** Data kept here across runs; in memory without it. */
        readonly dataDirectory?: string;
        /** Restart DynamoDB Local when it dies (npm start), logging through `log`; `onGiveUp` when it cannot. */
        readonly supervise?: { readonly log: (line: string) => void; readonly onGiveUp: (error: Error) => void };
      };
  readonly tablePrefix: string;
  /** Called with the tables it had to create (at the first start, after a restart that lost them). */
  readonly onTablesCreated?: (names: string[]) => void;
  /**
   * Where the functions reach DynamoDB, given DynamoDB's endpoint (default: the same). The bench
   * puts its counting proxy in between.
   */
  readonly functionsEndpoint?: (endpoint: string) => Promise<string>;
  /** More environment for the functions (production or local settings). */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * The values of the secrets (functions/secrets.ts) that Secrets Manager holds in AWS: npm start's
   * from its files under .local/, the tests' fixed ones (local/secrets.ts). Fresh random ones when
   * left out, which only a stack whose data lives in memory may do: hashes kept in a database
   * that outlives the stack would no longer match.
   */
  readonly secrets?: SecretValues;
  /** The local S3 (s3.ts): port and data directory; none when false. */
  readonly s3?: false | { readonly port?: number; readonly dataDirectory?: string };
  /** Both hosts' servers: ports (default free ones), handlers (default the sources), log. */
  readonly api?: false | { readonly ports?: { core: number; pos: number }; readonly loadHandler?: HandlerLoader; readonly log?: (line: string) => void };
  /** The webhook stand-ins, with these settings (workers default to the sources); none without it. */
  readonly webhooks?: Omit<LocalWebhookOptions, 'endpoint' | 'tableNames' | 'loadWorker'> & Partial<Pick<LocalWebhookOptions, 'loadWorker'>>;
}

export interface LocalStack {
  /** DynamoDB's own endpoint. */
  readonly dynamodbEndpoint: string;
  /** The one the functions use (DYNAMODB_ENDPOINT): DynamoDB's, or functionsEndpoint's. */
  readonly functionsEndpoint: string;
  /** DynamoDB Local's port, when this stack started it. */
  readonly dynamodbPort: number | undefined;
  readonly tableNames: TableNames;
  /** The environment set for the functions. */
  readonly environment: Readonly<Record<string, string>>;
  readonly api: LocalApi | undefined;
  readonly s3: LocalS3 | undefined;
  readonly webhooks: LocalWebhooks | undefined;
  /** Servers, webhooks, then DynamoDB Local (if this stack started it). */
  stop(): Promise<void>;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const database = options.dynamodb ?? {};
  if (!options.secrets && ('endpoint' in database || database.dataDirectory)) {
    throw new Error('startLocalStack: a database that outlives the stack needs the secrets it was used with (options.secrets)');
  }
  const secretValues = secretEnvironment(options.secrets ?? randomSecrets());
  const names = tableNamesWithPrefix(options.tablePrefix);
  const tablesReady = async (endpoint: string) => {
    const created = await ensureTables(endpoint, names);
    if (created.length > 0) options.onTablesCreated?.(created.map((id) => names[id]));
  };

  let dynamodbEndpoint: string;
  let dynamodbPort: number | undefined;
  let stopDynamoDb: () => Promise<void> = async () => {};
  if ('endpoint' in database) {
    dynamodbEndpoint = database.endpoint;
    await tablesReady(dynamodbEndpoint);
  } else {
    dynamodbPort = database.port ?? (await freePort());
    const where = { port: dynamodbPort, ...(database.dataDirectory ? { dataDirectory: database.dataDirectory } : {}) };
    if (database.supervise) {
      const supervised = await superviseDynamoDbLocal({ ...where, ...database.supervise, onStart: tablesReady });
      dynamodbEndpoint = supervised.endpoint;
      stopDynamoDb = () => supervised.stop();
    } else {
      const running = await startDynamoDbLocal(where);
      dynamodbEndpoint = running.endpoint;
      stopDynamoDb = () => running.stop();
      await tablesReady(dynamodbEndpoint).catch(async (error) => {
        await running.stop();
        throw error;
      });
    }
  }

  let api: LocalApi | undefined;
  let s3: LocalS3 | undefined;
  let webhooks: LocalWebhooks | undefined;
  const stop = async () => {
    await api?.close();
    await webhooks?.close();
    await s3?.close();
    await stopDynamoDb();
  };
  try {
    const functionsEndpoint = options.functionsEndpoint ? await options.functionsEndpoint(dynamodbEndpoint) : dynamodbEndpoint;
    if (options.s3 !== false) {
      const settings = options.s3 ?? {};
      s3 = await startLocalS3({ bucketPrefix: options.tablePrefix, ...settings });
    }
    const environment = {
      ...tableEnvironment(names),
      DYNAMODB_ENDPOINT: functionsEndpoint,
      ...secretValues,
      // The SDK's default adds CRC32 checksums to uploads; the local S3 server does not check them.
      ...(s3 ? { ...s3.environment, AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED' } : {}),
      ...options.environment,
    };
    Object.assign(process.env, environment);

    if (options.api !== false) {
      const settings = options.api ?? {};
      api = await startLocalApi({
        ports: settings.ports ?? { core: 0, pos: 0 },
        loadHandler: settings.loadHandler ?? sourceHandlers,
        ...(settings.log ? { log: settings.log } : {}),
      });
    }
    if (options.webhooks) {
      webhooks = await startLocalWebhooks({ loadWorker: sourceWorkers, ...options.webhooks, endpoint: functionsEndpoint, tableNames: names });
    }
    return { dynamodbEndpoint, functionsEndpoint, dynamodbPort, tableNames: names, environment, api, s3, webhooks, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
