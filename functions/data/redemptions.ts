import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { asIssued, CODES_TABLE, codeKey, type CodeItem } from './codes.ts';
import { POS_TRANSACTIONS_TABLE, transactionKey, type PosTransaction } from './pos-transactions.ts';
import { pause } from './transactions.ts';

/**
 * What a redemption or a check decides on, in one consistent BatchGetItem: the listed codes of
 * the account (by their key spelling) and the transaction. A pending code found there costs one
 * more read (its issuance record): only a code of an issuance still under way, or of one whose
 * finalisation was cut off, is pending.
 */
export interface RedemptionState {
  /** Issued codes by key spelling; absent: no such issued code in this account. */
  readonly codes: ReadonlyMap<string, CodeItem>;
  readonly transaction?: PosTransaction;
}

const UNPROCESSED_ROUNDS = 5;

export async function readRedemptionState(accountId: number, siteId: string, posTransactionId: string, codes: readonly string[]): Promise<RedemptionState> {
  let request: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }> = {
    [POS_TRANSACTIONS_TABLE]: { Keys: [{ transaction_key: transactionKey(accountId, siteId, posTransactionId) }], ConsistentRead: true },
    ...(codes.length > 0 ? { [CODES_TABLE]: { Keys: codes.map((code) => ({ code_key: codeKey(accountId, code) })), ConsistentRead: true } } : {}),
  };
  const found: Record<string, unknown>[] = [];
  let transaction: PosTransaction | undefined;
  for (let round = 0; ; round++) {
    const answer = await documents.send(new BatchGetCommand({ RequestItems: request }));
    found.push(...((answer.Responses?.[CODES_TABLE] ?? []) as Record<string, unknown>[]));
    transaction ??= answer.Responses?.[POS_TRANSACTIONS_TABLE]?.[0] as PosTransaction | undefined;
    const unprocessed = answer.UnprocessedKeys ?? {};
    if (Object.keys(unprocessed).length === 0) break;
    // Throttling inside a batch comes back as unprocessed keys, not as an error.
    if (round + 1 >= UNPROCESSED_ROUNDS) throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
    await pause(round);
    request = unprocessed as typeof request;
  }
  const items = new Map<string, CodeItem>();
  for (const item of found as unknown as CodeItem[]) {
    const issued = await asIssued(item);
    if (issued) items.set(issued.code, issued);
  }
  return { codes: items, ...(transaction ? { transaction } : {}) };
}
