import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('exports');

type ExportStatus = 'running' | 'completed' | 'failed';

/** How long a completed export's file is kept: the bucket's lifecycle rule (functions/buckets.ts) deletes it then. */
const EXPORT_RETENTION_DAYS = 7;

/**
 * An export of a generator's codes: what was asked (`redeemed`: only those, only the others, or
 * all when absent), its state, and once completed the rows written and the S3 object holding the
 * file (`object_key`; each attempt writes an object of its own, and the one that completes the
 * export names its own, so `rows` always counts the file the URL gives).
 */
export interface ExportRecord {
  account_id: number;
  id: number;
  code_generator_id: number;
  redeemed?: boolean;
  status: ExportStatus;
  rows: number;
  error: string | null;
  created_at: string;
  completed_at: string | null;
  /** When the file is deleted: completion + 7 days. */
  expires_at: string | null;
  object_key?: string;
}

export function newExport(accountId: number, id: number, generatorId: number, redeemed: boolean | undefined, now: Date): ExportRecord {
  return {
    account_id: accountId,
    id,
    code_generator_id: generatorId,
    ...(redeemed !== undefined ? { redeemed } : {}),
    status: 'running',
    rows: 0,
    error: null,
    created_at: now.toISOString(),
    completed_at: null,
    expires_at: null,
  };
}

/** Fails its condition only if the fresh id is taken. */
export function putExport(record: ExportRecord): TransactItem {
  return { Put: { TableName: TABLE, Item: record, ConditionExpression: 'attribute_not_exists(id)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
}

export async function findExport(accountId: number, id: number): Promise<ExportRecord | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { account_id: accountId, id }, ConsistentRead: true }));
  return Item as ExportRecord | undefined;
}

/** Completes a running export (fails its condition when another attempt already ended it). */
export function completeExport(record: ExportRecord, rows: number, objectKey: string, now: Date): TransactItem {
  const expires = new Date(now.getTime() + EXPORT_RETENTION_DAYS * 86_400_000);
  return {
    Update: {
      TableName: TABLE,
      Key: { account_id: record.account_id, id: record.id },
      UpdateExpression: 'SET #status = :completed, #rows = :rows, completed_at = :now, expires_at = :expires, object_key = :key',
      ConditionExpression: '#status = :running',
      ExpressionAttributeNames: { '#status': 'status', '#rows': 'rows' },
      ExpressionAttributeValues: {
        ':completed': 'completed',
        ':running': 'running',
        ':rows': rows,
        ':now': now.toISOString(),
        ':expires': expires.toISOString(),
        ':key': objectKey,
      },
    },
  };
}

/** Fails a running export with a reason a client can act on (fails its condition when it has ended). */
export function failExport(record: Pick<ExportRecord, 'account_id' | 'id'>, error: string, now: Date): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { account_id: record.account_id, id: record.id },
      UpdateExpression: 'SET #status = :failed, #error = :error, completed_at = :now',
      ConditionExpression: '#status = :running',
      ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
      ExpressionAttributeValues: { ':failed': 'failed', ':running': 'running', ':error': error, ':now': now.toISOString() },
    },
  };
}
