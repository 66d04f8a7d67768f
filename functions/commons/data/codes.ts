import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../clients.ts';
import { tableName } from '../config.ts';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('codes');

/**
 * One item per issued code, keyed `account#generator#CODE`, so a conditional put is what keeps a
 * code unique within its generator forever, across calls, concurrent calls and cold starts.
 *
 * An issuance of more codes than one transaction holds writes its codes in several
 * transactions. The codes of the earlier ones are written `pending`, naming their issuance; the
 * last transaction writes the rest of the codes, the issuance record and the event. A pending
 * code reads as issued only once its issuance record exists, so a call that fails half-way
 * leaves codes that never read as issued (and are never issued again).
 */
export interface CodeItem {
  code_key: string;
  /** As issued: the prefix and the generated characters. */
  code: string;
  account_id: number;
  code_generator_id: number;
  issued_at: string;
  issuance_id: number;
  pending: boolean;
}

export const codeKey = (accountId: number, generatorId: number, code: string) => `${accountId}#${generatorId}#${code}`;
const issuanceKey = (accountId: number, generatorId: number, issuanceId: number) => `${accountId}#${generatorId}#issuance#${issuanceId}`;

export function putCode(item: CodeItem): TransactItem {
  return { Put: { TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(code_key)' } };
}

export function putIssuance(accountId: number, generatorId: number, issuanceId: number, issuedAt: string, count: number): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: { code_key: issuanceKey(accountId, generatorId, issuanceId), account_id: accountId, code_generator_id: generatorId, issued_at: issuedAt, count },
      ConditionExpression: 'attribute_not_exists(code_key)',
    },
  };
}

/** The code as issued, if this generator of this account issued it (letters in any case). */
export async function findIssuedCode(accountId: number, generatorId: number, code: string): Promise<CodeItem | undefined> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: TABLE, Key: { code_key: codeKey(accountId, generatorId, code.toUpperCase()) }, ConsistentRead: true }),
  );
  const item = Item as CodeItem | undefined;
  if (!item || !item.pending) return item;
  const { Item: issuance } = await documents.send(
    new GetCommand({ TableName: TABLE, Key: { code_key: issuanceKey(accountId, generatorId, item.issuance_id) }, ConsistentRead: true }),
  );
  return issuance ? item : undefined;
}
