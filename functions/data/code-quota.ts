import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { numberFromEnv, tableName } from '#runtime/config';
import type { TransactItem } from './transactions.ts';

const TABLE = tableName('counters');

/**
 * Quotas (PRODUCT.md, "Accounts and tokens"): an account holds at most ACCOUNT_CODE_QUOTA issued
 * codes (10,000,000 by default; the stack's `accountCodeQuota` in AWS). Each account's issued codes
 * are counted on one item of the counters table, `codes-issued#<account>` (`issued`), which the
 * transaction that completes an issuance raises by its count on the condition that the quota
 * still has room: the count moves with the issuance, all or nothing, and racing issuances can
 * never take it past the quota together (their transactions meet on the item; one of them fails
 * its condition). Issuances (issue-codes.ts) and, later, issuance jobs use these functions:
 * `codeQuotaRoom` first (one read, so an issuance that cannot fit writes nothing at all), then
 * `takeFromCodeQuota` in the completing transaction (the exact check).
 *
 * Codes issued before the count existed are not in it: an account that had issued codes then is
 * counted from its first issuance after the change (docs/security.md, "Quotas").
 */
const ACCOUNT_CODE_QUOTA = Math.floor(numberFromEnv('ACCOUNT_CODE_QUOTA', 10_000_000));

const key = (accountId: number) => ({ name: `codes-issued#${accountId}` });

/** What an issuance that does not fit was refused by: the quota and what the account holds. */
export interface CodeQuotaRefusal {
  readonly quota: number;
  readonly issued: number;
}

/** Undefined when `count` more codes fit in the account's quota now (a consistent read), else what refuses them. */
export async function codeQuotaRoom(accountId: number, count: number, quota = ACCOUNT_CODE_QUOTA): Promise<CodeQuotaRefusal | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: key(accountId), ConsistentRead: true }));
  const issued = Number(Item?.issued ?? 0);
  return issued + count > quota ? { quota, issued } : undefined;
}

/**
 * The item of a completing transaction that counts `count` codes as issued, on the condition that
 * they fit in the quota; when it fails, the item as it is comes back (`quotaRefusal` reads it).
 */
export function takeFromCodeQuota(accountId: number, count: number, quota = ACCOUNT_CODE_QUOTA): TransactItem {
  if (count > quota) throw new Error(`takeFromCodeQuota: ${count} codes cannot fit in a quota of ${quota}; check codeQuotaRoom first`);
  return {
    Update: {
      TableName: TABLE,
      Key: key(accountId),
      UpdateExpression: 'ADD issued :count',
      ConditionExpression: 'attribute_not_exists(issued) OR issued <= :room',
      ExpressionAttributeValues: { ':count': count, ':room': quota - count },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** What refused a completing transaction whose quota item failed its condition (the item it returned). */
export const quotaRefusal = (item: Record<string, unknown> | undefined, quota = ACCOUNT_CODE_QUOTA): CodeQuotaRefusal => ({
  quota,
  issued: Number(item?.issued ?? 0),
});

/**
 * Part of the transaction that fails an issuance job: the `count` codes its creation took from
 * the quota are given back, so that the count stays exactly the codes that read as issued.
 */
export function giveBackToCodeQuota(accountId: number, count: number): TransactItem {
  return { Update: { TableName: TABLE, Key: key(accountId), UpdateExpression: 'ADD issued :less', ExpressionAttributeValues: { ':less': -count } } };
}
