import { describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { call, UUID } from '../../support/http.ts';
import { send, type PosBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { eventsOf, voidsOf } from '../../support/records.ts';

const transaction = {
  site_id: 'S-0042',
  pos_transaction_id: '1234',
  occurred_at: '2026-11-21T14:03:00+01:00',
  business_date: '2026-11-21',
  register_id: 'R1',
  operator_id: 'op-7',
  till_id: 'T3',
  table_id: '12',
  posagent_version: '5.2.0',
  pos_vendor: 'Acme POS',
  pos_version: '2026.3',
  receipt_id: 'RC-99',
};

const ctx = useLocalApi();

/** A void as a till sends it, through the typed client. */
const voidSale = (voided: PosBody<'voidTransaction'>['transaction'], token = ctx.account.token) =>
  send(ctx.api, token, ({ pos }) => pos.POST('/v2.0/voided_transactions', { body: { transaction: voided } }));
/** A body no client would send (unknown keys, nulls, malformed, mistyped): raw. */
const voidIt = (body: unknown, options: { token?: string; headers?: Record<string, string> } = {}) =>
  call(ctx.api, 'pos', 'POST', '/v2.0/voided_transactions', { token: options.token ?? ctx.account.token, body, headers: options.headers });

describe('POST /v2.0/voided_transactions', () => {
  it('voids: 200, no errors, one display message for the cashier, one void and one event', async () => {
    const response = await voidSale(transaction);

    expect(response.status).toBe(200);
    const [event] = await eventsOf(ctx.account.accountId);
    expect(response.json).toEqual({
      transaction: {
        errors: [],
        display_messages: [
          {
            message: 'Transaction 1234 voided',
            message_id: 'transaction_voided',
            message_content: {
              site_id: 'S-0042',
              pos_transaction_id: '1234',
              receipt_id: 'RC-99',
              event_id: event!.id,
              voided_at: expect.stringMatching(/Z$/),
            },
            priority: 1,
          },
        ],
      },
    });
    expect(event).toMatchObject({ type: 'transaction.voided', resource_id: 'S-0042/1234' });
    const voids = await voidsOf(ctx.account.accountId);
    expect(voids).toHaveLength(1);
    expect(voids[0]!.transaction).toEqual(transaction);
  });

  it('sends the pos host headers', async () => {
    const response = await voidSale(transaction);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers a repeat with the first body and writes nothing, whatever else the retry carries', async () => {
    const first = await voidSale(transaction);
    const retry = await voidSale({ ...transaction, posagent_version: '6.0.0', receipt_id: 'other' });

    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await voidsOf(ctx.account.accountId)).toHaveLength(1);
    expect(await eventsOf(ctx.account.accountId)).toHaveLength(1);
  });

  it('records exactly one void and one event when 20 identical voids arrive at once', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, () => voidSale(transaction)));

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(await voidsOf(ctx.account.accountId)).toHaveLength(1);
    expect(await eventsOf(ctx.account.accountId)).toHaveLength(1);
  });

  it('keeps voids apart by account, site and transaction id', async () => {
    const other = await newAccount();
    await voidSale(transaction);
    await voidSale({ ...transaction, site_id: 'S-0043' });
    await voidSale({ ...transaction, pos_transaction_id: '1235' });
    await voidSale(transaction, other.token);

    expect(await voidsOf(ctx.account.accountId)).toHaveLength(3);
    expect(await voidsOf(other.accountId)).toHaveLength(1);
  });

  it('accepts the two required fields alone, ignores unknown keys and treats null as absent', async () => {
    const response = await voidIt({
      transaction: { site_id: 'S1', pos_transaction_id: '77', loyalty_card: '1234', till_id: null },
      client_build: 99,
    });
    expect(response.status).toBe(200);
    expect((await voidsOf(ctx.account.accountId))[0]!.transaction).toEqual({ site_id: 'S1', pos_transaction_id: '77' });
  });

  describe('failures answer the pos error body with a display message, and write nothing', () => {
    const displayFor = (response: { json: any }) => response.json.transaction.display_messages;

    it('401 without a token or with a revoked one', async () => {
      const response = await call(ctx.api, 'pos', 'POST', '/v2.0/voided_transactions', { body: { transaction } });

      expect(response.status).toBe(401);
      expect(response.json).toEqual({
        transaction: {
          errors: [{ message: 'X-Auth-Token header is required' }],
          display_messages: [
            {
              message: "Void refused: the service did not accept this till's API token. Ask a manager to check the till's token.",
              message_id: 'unauthorized',
              message_content: { request_id: response.headers.get('x-request-id') },
              priority: 1,
            },
          ],
        },
      });
    });

    it.each([
      ['malformed JSON', '{"transaction":{', 'Request body is not valid JSON'],
      ['no transaction key', '{"void":{}}', 'Request body must be a JSON object with a "transaction" object'],
      ['transaction not an object', '{"transaction":[]}', 'Request body must be a JSON object with a "transaction" object'],
    ])('400 for %s', async (_, body, message) => {
      const response = await voidIt(body);
      expect(response.status).toBe(400);
      expect(response.json.transaction.errors).toEqual([{ message }]);
      expect(displayFor(response)[0].message_id).toBe('bad_request');
    });

    it('413 for a body over 16 KiB', async () => {
      const response = await voidIt({ transaction: { ...transaction, notes: 'x'.repeat(17_000) } });
      expect(response.status).toBe(413);
      expect(response.json.transaction.errors).toEqual([{ message: 'Request body exceeds 16384 bytes' }]);
    });

    it('415 for a form-encoded body', async () => {
      const response = await voidIt('site_id=S1', { headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      expect(response.status).toBe(415);
      expect(displayFor(response)[0].message_id).toBe('unsupported_media_type');
    });

    it('422 with one error per problem and a message the cashier can act on', async () => {
      const response = await voidIt({
        transaction: { site_id: '', occurred_at: 'yesterday', business_date: '2026-02-30', till_id: 7, receipt_id: 'r'.repeat(129) },
      });

      expect(response.status).toBe(422);
      const problems = [
        'transaction.site_id must not be empty',
        'transaction.pos_transaction_id is required',
        'transaction.occurred_at must be an RFC 3339 date-time such as 2026-11-21T14:03:00Z',
        'transaction.business_date must be a date that exists: 2026-02-30 is not a day of the calendar',
        'transaction.till_id must be a string',
        'transaction.receipt_id must be at most 128 characters',
      ];
      expect(response.json.transaction.errors).toEqual(problems.map((message) => ({ message })));
      expect(displayFor(response)).toEqual([
        {
          message: `Void not accepted: ${problems.join('; ')}. Correct the transaction before sending it again.`,
          message_id: 'validation_failed',
          message_content: { request_id: response.headers.get('x-request-id') },
          priority: 1,
        },
      ]);
      expect(await voidsOf(ctx.account.accountId)).toEqual([]);
      expect(await eventsOf(ctx.account.accountId)).toEqual([]);
    });
  });
});
