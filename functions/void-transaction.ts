import { api } from '#commons/api';
import { serviceUnavailable } from '#commons/errors';
import { newEvent, putEvent } from '#commons/data/events';
import { freshIdCollided, nextId } from '#commons/data/ids';
import { writeTogether } from '#commons/data/transactions';
import { putVoidedTransaction, voidKey, type VoidedTransaction } from '#commons/data/voided-transactions';
import type { VoidTransactionInput } from '#commons/schemas';
import voidTransaction from '#commons/schemas/voidTransaction.generated';

/**
 * One TransactWriteItems: the void and its `transaction.voided` event. A repeat of the same void
 * (account, site_id, pos_transaction_id), however its other fields differ, fails the void's
 * condition, gets the first void back with the failure, and answers its first response: the till
 * may retry after a timeout, or after an upgrade, and nothing is written twice.
 */
export const handler = api<VoidTransactionInput>({
  host: 'pos',
  operationId: 'voidTransaction',
  body: { root: 'transaction', schema: voidTransaction, lenient: true },
}).handler(async (event, context) => {
  const transaction = event.body;
  const key = voidKey(context.accountId, transaction.site_id, transaction.pos_transaction_id);
  for (let attempt = 0; attempt < 2; attempt++) {
    const record = newVoid(key, context.accountId, transaction, await nextId(), new Date());
    const result = await writeTogether([
      putVoidedTransaction(record),
      putEvent(newEvent(record.event_id, context.accountId, 'transaction.voided', voidResourceId(record), new Date(record.voided_at))),
    ]);
    if (result.outcome === 'written') return { statusCode: 200, rawJson: record.response };
    if (result.failed.has(0)) {
      const first = result.failed.get(0) as VoidedTransaction | undefined;
      if (first) return { statusCode: 200, rawJson: first.response, replayed: true };
    }
    if (result.failed.has(1)) freshIdCollided('events', record.event_id);
  }
  throw serviceUnavailable();
});

/** How an event names the void it records: `site_id/pos_transaction_id`. */
const voidResourceId = (record: VoidedTransaction) => `${record.site_id}/${record.pos_transaction_id}`;

function newVoid(key: string, accountId: number, transaction: VoidTransactionInput, eventId: number, now: Date): VoidedTransaction {
  const voidedAt = now.toISOString();
  return {
    void_key: key,
    account_id: accountId,
    site_id: transaction.site_id,
    pos_transaction_id: transaction.pos_transaction_id,
    event_id: eventId,
    voided_at: voidedAt,
    transaction: transaction as Record<string, string>,
    response: JSON.stringify({
      transaction: {
        errors: [],
        display_messages: [
          {
            message: `Transaction ${transaction.pos_transaction_id} voided`,
            message_id: 'transaction_voided',
            message_content: {
              site_id: transaction.site_id,
              pos_transaction_id: transaction.pos_transaction_id,
              ...(transaction.receipt_id !== undefined ? { receipt_id: transaction.receipt_id } : {}),
              event_id: eventId,
              voided_at: voidedAt,
            },
            priority: 1,
          },
        ],
      },
    }),
  };
}
