import { createHmac } from 'node:crypto';

/** Placeholder until the key's plumbing lands: HMAC-SHA256 of the account and customer id. */
export async function customerHash(accountId: number, customerId: string): Promise<string> {
  return createHmac('sha256', process.env.CUSTOMER_ID_KEY ?? 'tillgate-local-customer-key')
    .update(JSON.stringify([accountId, customerId]))
    .digest('base64url');
}
