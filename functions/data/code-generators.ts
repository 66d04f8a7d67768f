import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('codeGenerators');

export interface CodeGenerator {
  account_id: number;
  id: number;
  generation_type: 'tillgate' | 'numeric';
  buffer_type: 'default';
  code_length: number;
  description: string;
  prefix: string;
  store_id: number;
  status: 'active' | 'inactive';
  created_at: string;
  updated_at: string;
}

/** The by_store index's partition key: one store of one account. */
const storeKey = (accountId: number, storeId: number) => `${accountId}#${storeId}`;

/** Fails its condition only if the fresh id is taken: the id counter is behind the table. */
export function putCodeGenerator(generator: CodeGenerator): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: { ...generator, store_key: storeKey(generator.account_id, generator.store_id) },
      ConditionExpression: 'attribute_not_exists(id)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

export async function findCodeGenerator(accountId: number, id: number): Promise<CodeGenerator | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { account_id: accountId, id }, ConsistentRead: true }));
  return Item as CodeGenerator | undefined;
}

/**
 * Changes status and description, provided the generator is still as it was read (its
 * updated_at): a concurrent change makes the condition fail and the caller read again.
 */
export function updateCodeGenerator(current: CodeGenerator, next: CodeGenerator): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { account_id: current.account_id, id: current.id },
      UpdateExpression: 'SET #status = :status, description = :description, updated_at = :updated',
      ConditionExpression: 'updated_at = :was',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':status': next.status,
        ':description': next.description,
        ':updated': next.updated_at,
        ':was': current.updated_at,
      },
    },
  };
}

/** Part of the transaction that completes an issuance: the generator exists and is active. */
export function generatorIsActive(accountId: number, id: number): TransactItem {
  return {
    ConditionCheck: {
      TableName: TABLE,
      Key: { account_id: accountId, id },
      ConditionExpression: '#status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * One page of the account's generators (of one store, through the by_store index) in ascending
 * id order after `afterId`: one Query of `limit + 1` items.
 */
export async function listCodeGenerators(accountId: number, options: { storeId?: number; afterId: number; limit: number }) {
  const byStore = options.storeId !== undefined;
  const page = await documents.send(
    new QueryCommand({
      TableName: TABLE,
      ...(byStore
        ? {
            IndexName: 'by_store',
            KeyConditionExpression: 'store_key = :key AND id > :after',
            ExpressionAttributeValues: { ':key': storeKey(accountId, options.storeId!), ':after': options.afterId },
          }
        : {
            KeyConditionExpression: 'account_id = :key AND id > :after',
            ExpressionAttributeValues: { ':key': accountId, ':after': options.afterId },
            ConsistentRead: true,
          }),
      Limit: options.limit + 1,
    }),
  );
  const items = (page.Items ?? []) as CodeGenerator[];
  return { items: items.slice(0, options.limit), more: items.length > options.limit };
}
