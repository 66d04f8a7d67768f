import { describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { failingDynamoOperation } from '../support.ts';
import { useLoggedApi } from '../logged-api.ts';
import { call } from '../../support/http.ts';

/**
 * A till's customer (`transaction.customer_id`, a loyalty card or customer number) is never
 * logged and never returned (PRODUCT.md "Counting"). A run through the local server, with logging
 * at DEBUG, sends customers to both routes that take one, in successes, client errors (each way
 * the field can be wrong, and beside another fault) and server faults; then every line written to
 * stdout, stderr, the console and the local gateway's log, and every answer, is searched for them.
 */
const logged = useLoggedApi();

describe("a till's customer in logs and answers", () => {
  it('appears in no log line and no answer of a run that redeemed and checked codes for customers, right and wrong', async () => {
    const account = await newAccount();
    const created = await call(logged.api, 'core', 'POST', '/v1.0/codegen', {
      token: account.token,
      body: { code_generator: { generation_type: 'tillgate', code_length: 10, prefix: 'WIN-', store_id: 1 } },
    });
    const generatorId = created.json.code_generator.id as number;
    const issued = await call(logged.api, 'core', 'POST', `/v1.0/codegen/${generatorId}/codes`, { token: account.token, body: { count: 2 } });
    const codes = issued.json.codes as string[];

    const card = 'LoyaltyCard-5X7Q-Private';
    const tooLong = `Private-${'q'.repeat(121)}`;
    const number = 730_019_447_118;
    const answers: string[] = [];
    const statuses: number[] = [];
    const send = async (path: string, transaction: Record<string, unknown>) => {
      const response = await call(logged.api, 'pos', 'POST', path, { token: account.token, body: { transaction } });
      answers.push(response.text);
      statuses.push(response.status);
    };

    for (const path of ['/v2.0/validated_codes', '/v2.0/redeemed_codes']) {
      const sale = { site_id: 'S-1', pos_transaction_id: `T-${path.length}`, codes };
      // A success, and its retry.
      await send(path, { ...sale, customer_id: card });
      await send(path, { ...sale, customer_id: card });
      // The field wrong in every way it can be, alone and beside another fault.
      for (const customer of [tooLong, number, { card }, [card], '']) await send(path, { ...sale, customer_id: customer });
      await send(path, { ...sale, site_id: '', customer_id: tooLong });
      await send(path, { ...sale, codes: [], customer_id: card });
      // Codes that do not exist (422) and held by another transaction (409 once redeemed).
      await send(path, { ...sale, codes: ['WIN-NOSUCHCODE'], customer_id: card });
      await send(path, { ...sale, pos_transaction_id: 'T-other', customer_id: card });
      // Server faults on the codes' read: a throttled database (503) and a bug (500), whose error is logged in full.
      for (const [status, type] of [
        [400, 'ThrottlingException'],
        [400, 'ValidationException'],
      ] as const) {
        const spy = failingDynamoOperation(logged.transport, 'BatchGetItem', status, type);
        await send(path, { ...sale, pos_transaction_id: `T-fault-${type}`, customer_id: card });
        spy.mockRestore();
      }
    }

    expect(new Set(statuses)).toEqual(new Set([200, 409, 422, 500, 503]));
    const lines = logged.captured
      .join('\n')
      .split('\n')
      .filter((line) => line.trim() !== '');
    // The capture saw the request lines and the fault's error line.
    expect(lines.filter((line) => line.includes('"message":"request"')).length).toBeGreaterThanOrEqual(statuses.length);
    expect(lines.some((line) => line.includes('request failed'))).toBe(true);
    const everything = [...lines, ...answers].map((text) => text.toLowerCase());
    for (const secret of [card, tooLong.slice(0, 20), String(number)]) {
      expect(
        everything.filter((text) => text.includes(secret.toLowerCase())),
        secret,
      ).toEqual([]);
    }
  });
});
