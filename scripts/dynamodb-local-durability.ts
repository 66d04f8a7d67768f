import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CreateTableCommand, ScanCommand, TransactWriteItemsCommand, waitUntilTableExists, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { freePort, localClient, startDynamoDbLocal } from '../local/dynamodb.ts';

/**
 * `npx tsx scripts/dynamodb-local-durability.ts [--rounds 25] [--signal SIGTERM|SIGKILL]`
 *
 * Does DynamoDB Local keep every write it acknowledged when it is stopped under load? Each round
 * starts it on a data directory, has 12 writers commit two-item transactions, stops it mid-stream,
 * starts it again on the same data, and counts acknowledged transactions that are missing and
 * transactions that were half applied. No tillgate code is involved: this measures the emulator,
 * and explains why test/attack/database/outage.test.ts checks zero loss through a network cut, not a stop.
 */
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '25' }, signal: { type: 'string', default: 'SIGTERM' } } });
const signal = values.signal as NodeJS.Signals;

async function keys(client: DynamoDBClient, table: string): Promise<Set<string>> {
  const found = new Set<string>();
  let start: Record<string, any> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
    page.Items?.forEach((item) => found.add(item.k!.S!));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

let roundsWithLoss = 0;
let lostTotal = 0;
let partialTotal = 0;
for (let round = 1; round <= Number(values.rounds); round++) {
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), 'tillgate-durability-'));
  let database = await startDynamoDbLocal({ port, dataDirectory: directory });
  const client = localClient(database.endpoint);
  for (const table of ['probe_a', 'probe_b']) {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }],
      }),
    );
    await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName: table });
  }
  const acknowledged = new Set<string>();
  let n = 0;
  let running = true;
  const writers = Array.from({ length: 12 }, async () => {
    while (running) {
      const k = `k${++n}`;
      const put = (table: string) => ({ Put: { TableName: table, Item: { k: { S: k } }, ConditionExpression: 'attribute_not_exists(k)' } });
      try {
        await client.send(new TransactWriteItemsCommand({ TransactItems: [put('probe_a'), put('probe_b')] }));
        acknowledged.add(k);
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  });
  await new Promise((r) => setTimeout(r, 800 + Math.random() * 400));
  await database.stop(signal);
  running = false;
  await Promise.all(writers);
  client.destroy();

  database = await startDynamoDbLocal({ port, dataDirectory: directory });
  const reader = localClient(database.endpoint);
  const [a, b] = [await keys(reader, 'probe_a'), await keys(reader, 'probe_b')];
  reader.destroy();
  await database.stop();
  rmSync(directory, { recursive: true, force: true });

  const lost = [...acknowledged].filter((k) => !a.has(k));
  const partial = [...a].filter((k) => !b.has(k)).length + [...b].filter((k) => !a.has(k)).length;
  if (lost.length > 0) roundsWithLoss++;
  lostTotal += lost.length;
  partialTotal += partial;
  console.log(`round ${round}: acknowledged ${acknowledged.size}, stored ${a.size}, acknowledged but lost ${lost.length}, half applied ${partial}`);
}
console.log(
  `\n${signal}: ${roundsWithLoss} of ${values.rounds} stops lost acknowledged transactions (${lostTotal} in all); half-applied transactions: ${partialTotal}`,
);
process.exit(0);
