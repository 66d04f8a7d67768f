import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../clients.ts';
import { tableName } from '../config.ts';

const TABLE = tableName('counters');

export type Sequence = 'code_generator' | 'event';

/**
 * Allocates the next integer of each named sequence in one atomic update of a single counter
 * item. Ids are unique in the deployment and increasing; a request that loses a race after
 * allocating leaves a gap, never a duplicate.
 */
export async function nextIds<S extends Sequence>(...sequences: S[]): Promise<Record<S, number>> {
  const names = Object.fromEntries(sequences.map((sequence, i) => [`#s${i}`, sequence]));
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: { name: 'ids' },
      UpdateExpression: `ADD ${sequences.map((_, i) => `#s${i} :one`).join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Object.fromEntries(sequences.map((sequence) => [sequence, Number(Attributes?.[sequence])])) as Record<S, number>;
}
