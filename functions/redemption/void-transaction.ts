import { api } from '#http/chain';
import { serviceUnavailable } from '#http/errors';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { putVoid, transactionKey, transactionResourceId, voidHolding, type HeldCode, type PosTransaction, type VoidFields } from '#data/pos-transactions';
import { writeTogether } from '#data/transactions';
import { codeReleased } from './messages.ts';
import { givesBack } from './give-back.ts';
import type { VoidTransactionInput } from '#http/schemas';
import voidTransaction from '#http/schemas/voidTransaction.generated';

/** Rounds lost to a concurrent redemption or void of the same transaction before a 503. */
const ATTEMPTS = 4;

/**
 * A void of a transaction that holds no code is one TransactWriteItems: the void and its
 * `transaction.voided` event, on the condition that the transaction does not exist yet. When it
 * does, the failed condition returns it, and no read is needed to tell a repeat (voided before:
 * the first response again, whatever else the retry carries) from a transaction holding codes.
 * Those are released by a second TransactWriteItems with the void, its event and a
 * `codes.released` event, on the condition that the transaction still holds what was returned
 * (a redemption racing the void makes it try again with the new list).
 */
export const handler = api<VoidTransactionInput>({
  host: 'pos',
  operationId: 'voidTransaction',
  body: voidTransaction,
}).handler(async (event, context) => {
  const transaction = event.body;
  const accountId = context.accountId;
  const key = transactionKey(accountId, transaction.site_id, transaction.pos_transaction_id);
  const resourceId = transactionResourceId(transaction.site_id, transaction.pos_transaction_id);
  let holding: PosTransaction | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = new Date();
    const fields = voidFields(transaction, await nextId(), now, holding?.codes ?? []);
    const voided = putEvent(newEvent(fields.event_id, accountId, 'transaction.voided', resourceId, now));
    let result;
    let releasedEventId: number | undefined;
    if (!holding) {
      const record = {
        transaction_key: key,
        account_id: accountId,
        site_id: transaction.site_id,
        pos_transaction_id: transaction.pos_transaction_id,
        ...fields,
      };
      result = await writeTogether([putVoid(record), voided]);
    } else {
      const held = holding.codes ?? [];
      releasedEventId = await nextId();
      result = await writeTogether([
        voidHolding(holding, fields),
        voided,
        putEvent(newEvent(releasedEventId, accountId, 'codes.released', resourceId, now)),
        ...givesBack(accountId, key, held),
      ]);
    }
    if (result.outcome === 'written') return { statusCode: 200, rawJson: fields.response };
    const current = result.failed.get(0) as PosTransaction | undefined;
    if (current?.voided_at !== undefined) return { statusCode: 200, rawJson: current.response!, replayed: true };
    if (result.failed.has(0)) {
      // The transaction holds codes (or holds others than returned before): release what it holds now.
      if (current) holding = current;
      continue;
    }
    if (result.failed.has(1)) freshIdCollided('events', fields.event_id);
    if (releasedEventId !== undefined && result.failed.has(2)) freshIdCollided('events', releasedEventId);
    const released = [...result.failed.keys()].filter((index) => index >= 3);
    // A code the transaction lists is held by another, or a count holds less than it gave: the
    // tables disagree, which no write of this service does. A bug, not a state to answer.
    if (holding && released.length > 0) throw new Error(`void: ${released.length} release(s) of what the transaction holds failed their condition`);
  }
  throw serviceUnavailable();
});

function voidFields(transaction: VoidTransactionInput, eventId: number, now: Date, released: HeldCode[]): VoidFields {
  const voidedAt = now.toISOString();
  return {
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
          ...released.map(codeReleased),
        ],
      },
    }),
  };
}
