import { api } from '#commons/api';
import { newEvent, putEvent } from '#commons/data/events';
import { nextIds } from '#commons/data/ids';
import { readOrCreate, writeTogether } from '#commons/data/transactions';
import {
  findVoidedTransaction,
  putVoidedTransaction,
  voidKey,
  type VoidedTransaction,
} from '#commons/data/voided-transactions';
import type { VoidTransactionInput } from '#commons/schemas';



type TransactionInput = VoidTransactionInput;

export const handler = api<TransactionInput>({
  host: 'pos',
  operationId: 'voidTransaction',
  body: { root: 'transaction', schema: 'voidTransaction', lenient: true },
})
  .handler(async (event, context) => {
    const transaction = event.body;
    const key = voidKey(context.accountId, transaction.site_id, transaction.pos_transaction_id);
    // A repeat of the same void, however its other fields differ, gets the first answer and
    // writes nothing: the till may retry after a timeout, or after an upgrade.
    const { value, created } = await readOrCreate(
      () => findVoidedTransaction(key),
      async () => {
        const { event: eventId } = await nextIds('event');
        const record = newVoid(key, context.accountId, transaction, eventId, new Date());
        const outcome = await writeTogether([
          putVoidedTransaction(record),
          putEvent(
            newEvent(eventId, context.accountId, 'transaction.voided', voidResourceId(record), new Date(record.voided_at)),
          ),
        ]);
        return { outcome, value: record };
      },
    );
    const reply = { statusCode: 200, rawJson: value.response };
    return created ? reply : { ...reply, replayed: true };
  });

/** How an event names the void it records: `site_id/pos_transaction_id`. */
const voidResourceId = (record: VoidedTransaction) => `${record.site_id}/${record.pos_transaction_id}`;

function newVoid(key: string, accountId: number, transaction: TransactionInput, eventId: number, now: Date): VoidedTransaction {
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
