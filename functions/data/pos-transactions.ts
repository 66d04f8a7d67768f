import { tableName } from '#runtime/config';
import type { Discount } from './code-generators.ts';
import type { TransactItem } from './transactions.ts';

export const POS_TRANSACTIONS_TABLE = tableName('posTransactions');
const TABLE = POS_TRANSACTIONS_TABLE;

export { MAX_HELD_CODES } from '#functions/tables';

/** A code a transaction holds, as its redemption recorded it: a retry answers with what it got then. */
export interface HeldCode {
  /** As issued. */
  code: string;
  code_generator_id: number;
  redeemed_at: string;
  /** The generator's discount when it was redeemed (absent on redemptions before terms existed: none). */
  discount?: Discount;
  /** What it took off the basket, when a basket was sent and the discount is not `none`. */
  discount_amount?: number;
  currency?: string;
  /**
   * How its use was counted (PRODUCT.md "Counting"), so the void gives it back the same way:
   * `item` (the code's holder field; single-use), `shards` (a multi-use code's counts and holder
   * record). Both count on the promotion's shard too. Absent: redeemed before counts existed,
   * nothing to give back but the holder field.
   */
  counted?: 'item' | 'shards';
  /** The keyed hash of the customer id the till sent (customer-uses.ts), never the id. */
  customer?: string;
}

/**
 * One item per point-of-sale transaction of an account (site_id + pos_transaction_id): the codes
 * it holds and, once voided, its void. A redemption creates or extends it; a void creates it
 * (no code held) or completes it (releasing what it holds). Every write to it is conditioned on
 * what was read (`version`, and not voided), so two redemptions of one transaction, or a
 * redemption and a void, can never both act on the same state.
 */
export interface PosTransaction {
  /** JSON of [account_id, site_id, pos_transaction_id]: unambiguous whatever the ids contain. */
  transaction_key: string;
  account_id: number;
  site_id: string;
  pos_transaction_id: string;
  /** The codes it holds (it held, once voided), in the order redeemed. */
  codes?: HeldCode[];
  /** Bumped by every redemption that adds codes. */
  version?: number;
  event_id?: number;
  voided_at?: string;
  /** The void's fields as the first void request sent them. */
  transaction?: Record<string, string>;
  /** The body of the first void response as a JSON string (DynamoDB maps do not keep key order). */
  response?: string;
}

export const transactionKey = (accountId: number, siteId: string, posTransactionId: string) => JSON.stringify([accountId, siteId, posTransactionId]);

/**
 * How events name a transaction: site_id and pos_transaction_id, each encoded as
 * encodeURIComponent does, joined by `/`. encodeURIComponent throws on a lone surrogate (JSON
 * allows `"\ud800"`); such a code unit is encoded as U+FFFD (`%EF%BF%BD`), as toWellFormed makes it.
 */
const encodeComponent = (text: string) => encodeURIComponent(text.toWellFormed());
export const transactionResourceId = (siteId: string, posTransactionId: string) => `${encodeComponent(siteId)}/${encodeComponent(posTransactionId)}`;

export type VoidFields = Required<Pick<PosTransaction, 'event_id' | 'voided_at' | 'transaction' | 'response'>>;

/**
 * The void of a transaction nobody redeemed a code on: fails its condition when the transaction
 * exists (voided before, or holding codes) and returns it, so a repeat or a release costs no read.
 */
export function putVoid(record: PosTransaction & VoidFields): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: record,
      ConditionExpression: 'attribute_not_exists(transaction_key)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** The void of a transaction holding codes, as read (`version`): the codes are released beside it. */
export function voidHolding(current: PosTransaction, fields: VoidFields): TransactItem {
  return {
    Update: {
      TableName: TABLE,
      Key: { transaction_key: current.transaction_key },
      UpdateExpression: 'SET event_id = :event, voided_at = :at, #transaction = :transaction, #response = :response',
      ConditionExpression: 'version = :version AND attribute_not_exists(voided_at)',
      ExpressionAttributeNames: { '#transaction': 'transaction', '#response': 'response' },
      ExpressionAttributeValues: {
        ':event': fields.event_id,
        ':at': fields.voided_at,
        ':transaction': fields.transaction,
        ':response': fields.response,
        ':version': current.version ?? 0,
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * Adds codes to what a transaction holds, provided it is as read: absent (`current` undefined),
 * or at the version read and not voided. Fails, returning the transaction, when a void or
 * another redemption of it came first.
 */
export function holdCodes(accountId: number, siteId: string, posTransactionId: string, current: PosTransaction | undefined, added: HeldCode[]): TransactItem {
  const key = transactionKey(accountId, siteId, posTransactionId);
  return {
    Update: {
      TableName: TABLE,
      Key: { transaction_key: key },
      UpdateExpression:
        'SET account_id = :account, site_id = :site, pos_transaction_id = :pos, codes = list_append(if_not_exists(codes, :none), :added), version = :next',
      ConditionExpression: current ? 'version = :version AND attribute_not_exists(voided_at)' : 'attribute_not_exists(transaction_key)',
      ExpressionAttributeValues: {
        ':account': accountId,
        ':site': siteId,
        ':pos': posTransactionId,
        ':none': [],
        ':added': added,
        ':next': (current?.version ?? 0) + 1,
        ...(current ? { ':version': current.version ?? 0 } : {}),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
