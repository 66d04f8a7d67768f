import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('customerUses');

/**
 * The uses one customer holds of one promotion (PRODUCT.md "Counting": `max_redemptions_per_customer`),
 * one small item per customer and promotion, keyed by the keyed hash of the customer id
 * (runtime/customer-key.ts): the id itself is never stored. One customer is never a chain's peak,
 * so the count is one item, written with the condition that the limit holds. Counted whenever a
 * till sends a customer id, limit or not, so that a limit set later counts what was held before.
 */
const customerKey = (accountId: number, generatorId: number, customerHash: string) => `${accountId}#${generatorId}#${customerHash}`;

/** Takes `take` uses for the customer, within `limit` (null: no limit). Fails returning the count as it is. */
export function customerTakes(accountId: number, generatorId: number, customerHash: string, take: number, limit: number | null): TransactItem {
  // A customer with no item yet holds none: the take alone must fit (several codes of one request may pass the limit at once).
  const condition = limit === null ? undefined : take <= limit ? 'attribute_not_exists(used) OR used <= :most' : 'used <= :most';
  return {
    Update: {
      TableName: TABLE,
      Key: { customer_key: customerKey(accountId, generatorId, customerHash) },
      UpdateExpression: 'SET used = if_not_exists(used, :zero) + :take, account_id = :account, code_generator_id = :generator',
      ...(condition === undefined ? {} : { ConditionExpression: condition }),
      ExpressionAttributeValues: {
        ':zero': 0,
        ':take': take,
        ':account': accountId,
        ':generator': generatorId,
        ...(limit === null ? {} : { ':most': limit - take }),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** A void's part: the customer's uses of the promotion given back. */
export function customerGivesBack(accountId: number, generatorId: number, customerHash: string, uses: number): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { customer_key: customerKey(accountId, generatorId, customerHash) },
      UpdateExpression: 'SET used = used - :uses',
      ConditionExpression: 'used >= :uses',
      ExpressionAttributeValues: { ':uses': uses },
    },
  };
}

/** The uses the customer holds of each promotion now: one consistent BatchGetItem (a check's read). */
export async function customerUses(accountId: number, customerHash: string, generatorIds: readonly number[]): Promise<Map<number, number>> {
  const uses = new Map<number, number>(generatorIds.map((id) => [id, 0]));
  if (generatorIds.length === 0) return uses;
  const answer = await documents.send(
    new BatchGetCommand({
      RequestItems: { [TABLE]: { Keys: generatorIds.map((id) => ({ customer_key: customerKey(accountId, id, customerHash) })), ConsistentRead: true } },
    }),
  );
  for (const item of answer.Responses?.[TABLE] ?? []) uses.set(Number(item.code_generator_id), Number(item.used ?? 0));
  return uses;
}
