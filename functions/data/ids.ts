import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { numberFromEnv, tableName } from '#runtime/config';
import { logger } from '#runtime/observability';

const TABLE = tableName('counters');

/**
 * Integer ids unique in the deployment, for code generators, events and issuances alike. Each
 * execution environment reserves a block of ID_BLOCK_SIZE ids with one atomic ADD on the counter
 * item and hands them out from memory: the counter is written once per block, not once per
 * record, so it caps the deployment near 1,000 blocks a second (100,000 ids a second with the
 * default block), not near 1,000 records. Ids are unique and positive but not in commit order;
 * a block left unused when an environment ends leaves a gap.
 */
const BLOCK_SIZE = Math.max(1, Math.floor(numberFromEnv('ID_BLOCK_SIZE', 100)));

let next = 0;
let end = 0;
let reserving: Promise<void> | undefined;

export async function nextId(): Promise<number> {
  while (next >= end) {
    reserving ??= reserveBlock().finally(() => {
      reserving = undefined;
    });
    await reserving;
  }
  return next++;
}

/**
 * Forgets the rest of the block: called when a fresh id was found already in use, which means
 * the counter is behind the tables (restored from an older backup, say). The next id then comes
 * from a new block.
 */
export function discardIdBlock(): void {
  next = end;
}

async function reserveBlock(): Promise<void> {
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: { name: 'ids' },
      UpdateExpression: 'ADD #value :block',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: { ':block': BLOCK_SIZE },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const top = Number(Attributes?.value);
  next = top - BLOCK_SIZE + 1;
  end = top + 1;
}

/**
 * A fresh id was already taken (a conditional put of a new record failed on it): the counter is
 * behind the table, e.g. restored from an older backup. Not contention and not a duplicate
 * request: logged for on-call with what collided, and the block is dropped so the next attempt
 * draws ids from a new one.
 */
export function freshIdCollided(table: string, id: number): void {
  logger.error('fresh id already in use: the id counter is behind the table', { table, id, error_code: 'id_collision' });
  discardIdBlock();
}
