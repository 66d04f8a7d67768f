import { tableName } from '../config.ts';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('codeGenerators');

export interface CodeGenerator {
  id: number;
  account_id: number;
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

export function putCodeGenerator(generator: CodeGenerator): TransactItem {
  return { Put: { TableName: TABLE, Item: generator, ConditionExpression: 'attribute_not_exists(id)' } };
}
