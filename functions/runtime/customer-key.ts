import { createHmac } from 'node:crypto';
import { secretKeyReader } from './secret-value.ts';

/**
 * A customer id (`transaction.customer_id`: a loyalty card or customer number) is personal data:
 * it is never logged, never returned, and stored only as the keyed hash made here, so that the
 * tables count a customer's uses without holding who the customer is, and a copy of the tables
 * without the key cannot be searched for a known card number (a plain hash of a short number
 * can be reversed by trying them all).
 *
 * The key (functions/secrets.ts, `customerKey`): in AWS a Secrets Manager secret the stack
 * generated, read once per execution environment; on the local stack its value, from the
 * environment. Which one is settled when the module loads (missing configuration fails the cold
 * start, as a missing table name does); a failure to read the secret answers 503, never 500
 * (runtime/secret-value.ts reads it).
 */

/**
 * The key could not be read (Secrets Manager refused, timed out or is unreachable, or the secret
 * is not of the key's form). Its name is one of the transient faults of functions/http/errors.ts:
 * the request answers 503 with Retry-After, and on-call sees this message (never the key) in the
 * request's log lines.
 */
export class CustomerKeyUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CustomerKeyUnavailableError';
  }
}

const customerKey = secretKeyReader(
  'customerKey',
  'customer key',
  (message, options) => new CustomerKeyUnavailableError(message, options),
  'docs/deploying.md, "The customer key"',
);

/**
 * The keyed hash that stands for `customerId` of account `accountId`: HMAC-SHA256 with the
 * customer key over the JSON text of `["customer", accountId, customerId]` (an encoding no two
 * different pairs share: JSON quotes the id and escapes what is inside it, lone surrogates
 * included), in base64url (43 characters). The id is taken exactly as sent, as site ids are; the
 * account is part of it, so one card number in two accounts is two customers.
 */
export async function customerHash(accountId: number, customerId: string): Promise<string> {
  if (!Number.isSafeInteger(accountId) || accountId < 0) throw new Error(`customerHash: account id ${accountId} is not an integer`);
  const key = await customerKey();
  return createHmac('sha256', key)
    .update(JSON.stringify(['customer', accountId, customerId]))
    .digest('base64url');
}
