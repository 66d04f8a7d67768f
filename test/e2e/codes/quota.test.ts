import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call } from '../../support/http.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeItemsOf, eventsOf } from '../../support/records.ts';

// A small quota, read by the functions when they load (ACCOUNT_CODE_QUOTA, as for npm start).
vi.hoisted(() => {
  process.env.ACCOUNT_CODE_QUOTA = '250';
});

/**
 * Quotas (PRODUCT.md, "Accounts and tokens"), with ACCOUNT_CODE_QUOTA=250: an issuance that would
 * take the account past its quota answers 409 naming the quota, and writes nothing (no code, no
 * event, the count unchanged); one that fits exactly is served; racing issuances never take the
 * account past it together, and the account's count equals the codes it holds. Every answer is
 * checked against the OpenAPI document. Would catch: an account issuing without bound (300,000
 * codes a minute from one token before), a count that drifts from the codes (counted before the
 * issuance committed, or not at all when it did), a race that lets two issuances through into
 * the last room, a refusal that wrote its codes.
 */
const ctx = useLocalApi();
const QUOTA = 250;

async function newGenerator(): Promise<number> {
  const created = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
  expect(created.status, created.text).toBe(201);
  return created.json.code_generator.id;
}
const issue = (id: number, count: number, idempotencyKey?: string) =>
  call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/codes`, {
    token: ctx.account.token,
    body: { count },
    ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}),
  });
/** The codes that read as issued: code items that are not pending (the tests' issuances that pass are complete and finalised). */
const issuedCodes = async () => (await codeItemsOf(ctx.account.accountId)).filter((item) => typeof item.code === 'string' && item.pending !== true);
const counted = async () =>
  Number(
    (await documents.send(new GetCommand({ TableName: tableName('counters'), Key: { name: `codes-issued#${ctx.account.accountId}` }, ConsistentRead: true })))
      .Item?.issued ?? 0,
  );
const refusal = (issued: number, count: number) => ({
  errors: [
    {
      message: `This account may hold at most ${QUOTA} issued codes (its code quota) and holds ${issued}: ${count} more would pass it; issue at most ${QUOTA - issued}, or ask the operator to raise ACCOUNT_CODE_QUOTA`,
    },
  ],
});

describe('the account code quota (ACCOUNT_CODE_QUOTA=250)', () => {
  it('an issuance past the quota answers 409 naming it and writes nothing; one that fits exactly is served', async () => {
    const first = await newGenerator();
    const second = await newGenerator();
    expect((await issue(first, 200)).status).toBe(201); // three transactions: pending batches, then the last
    const events = (await eventsOf(ctx.account.accountId)).length;
    const items = (await codeItemsOf(ctx.account.accountId)).length;

    // Over by one, from another generator of the account: the quota is the account's.
    const over = await issue(second, 51);
    expect(over.status, over.text).toBe(409);
    expect(over.json).toEqual(refusal(200, 51));
    const overBig = await issue(second, 1000);
    expect(overBig.status, overBig.text).toBe(409);
    expect(overBig.json).toEqual(refusal(200, 1000));
    // Nothing written: no code item (not even pending), no event, the count as it was.
    expect((await codeItemsOf(ctx.account.accountId)).length).toBe(items);
    expect((await eventsOf(ctx.account.accountId)).length).toBe(events);
    expect(await counted()).toBe(200);

    const exact = await issue(second, 50, 'fill-it');
    expect(exact.status, exact.text).toBe(201);
    expect(await counted()).toBe(QUOTA);
    expect(await issuedCodes()).toHaveLength(QUOTA);
    // Full: one more is refused, but a repeat of the answered request gets its first answer.
    expect((await issue(first, 1)).json).toEqual(refusal(QUOTA, 1));
    const replayed = await issue(second, 50, 'fill-it');
    expect(replayed.status, replayed.text).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.json).toEqual(exact.json);
  });

  it('racing issuances never pass the quota together: 10 × 40 codes at once into room for 250 issue exactly 6 × 40', async () => {
    const id = await newGenerator();
    const answers = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        // A client retries a 503 with the same Idempotency-Key (a transaction conflict on a loaded machine).
        for (let attempt = 0; ; attempt++) {
          const answer = await issue(id, 40, `race-${i}`);
          if (answer.status !== 503 || attempt === 5) return answer;
          await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get('retry-after') ?? 1) * 1000));
        }
      }),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    // A refusal means the committed count had no room for 40 more: 240 were issued by then.
    expect(statuses, answers.map((answer) => answer.text).join('\n')).toEqual([...Array(6).fill(201), ...Array(4).fill(409)]);
    expect(await counted()).toBe(240);
    expect(await issuedCodes()).toHaveLength(240);
  });
});
