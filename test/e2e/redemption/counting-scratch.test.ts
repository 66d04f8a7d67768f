import { describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { scanAll } from '../../../local/dynamodb.ts';

const ctx = useLocalApi();
let sales = 0;

async function promotion(limits: Record<string, unknown>, count = 1) {
  const created = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: { ...winterPromotion } } }));
  const id = created.json.code_generator.id as number;
  const issued = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count } }));
  const names = Object.keys(limits);
  await documents.send(
    new UpdateCommand({
      TableName: tableName('codeGenerators'),
      Key: { account_id: ctx.account.accountId, id },
      UpdateExpression: `SET ${names.map((n, i) => `#n${i} = :v${i}`).join(', ')}, terms_version = :tv`,
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#n${i}`, n])),
      ExpressionAttributeValues: { ...Object.fromEntries(names.map((n, i) => [`:v${i}`, limits[n]])), ':tv': 2 },
    }),
  );
  if (limits.max_redemptions != null) {
    await documents.send(
      new UpdateCommand({
        TableName: tableName('promotionShards'),
        Key: { shard_key: `${ctx.account.accountId}#${id}#pool` },
        UpdateExpression: 'SET taken = :z, version = :v, ready = :t, account_id = :a, code_generator_id = :g',
        ExpressionAttributeValues: { ':z': 0, ':v': 2, ':t': true, ':a': ctx.account.accountId, ':g': id },
      }),
    );
  }
  return { id, codes: issued.json.codes as string[] };
}
const redeem = (codes: string[], extra: Record<string, unknown> = {}, sale = `T-${++sales}`) =>
  send(ctx.api, ctx.account.token, ({ pos }) =>
    pos.POST('/v2.0/redeemed_codes', { body: { transaction: { site_id: 'S1', pos_transaction_id: sale, codes, ...extra } as any } }),
  );
const voidSale = (sale: string) =>
  send(ctx.api, ctx.account.token, ({ pos }) => pos.POST('/v2.0/voided_transactions', { body: { transaction: { site_id: 'S1', pos_transaction_id: sale } } }));

describe('counting (scratch)', () => {
  it('a multi-use code: exactly k of N racing tills', async () => {
    const { codes } = await promotion({ max_redemptions_per_code: 7 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => redeem(codes)));
    const statuses = answers.map((a) => a.status);
    console.log(statuses.join(','), answers.find((a) => a.status !== 200)?.text);
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 409)).toHaveLength(13);
  });
  it('a budget: exactly k of N racing tills over distinct codes; voids give back', async () => {
    const { codes } = await promotion({ max_redemptions: 5 }, 12);
    const sold = codes.map(() => `T-${++sales}`);
    const answers = await Promise.all(codes.map((code, i) => redeem([code], {}, sold[i])));
    const statuses = answers.map((a) => a.status);
    console.log(statuses.join(','), answers.find((a) => a.status !== 200)?.text);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    const won = sold.filter((_, i) => statuses[i] === 200);
    for (const sale of won.slice(0, 2)) expect((await voidSale(sale)).status).toBe(200);
    const again = await Promise.all(codes.filter((_, i) => statuses[i] !== 200).map((code) => redeem([code])));
    console.log(again.map((a) => a.status).join(','));
    expect(again.filter((a) => a.status === 200)).toHaveLength(2);
    const shards = await scanAll(documents, { TableName: tableName('promotionShards') });
    console.log(JSON.stringify(shards.filter((s) => String(s.shard_key).startsWith(`${ctx.account.accountId}#`))));
  });
  it('a customer limit', async () => {
    const { codes } = await promotion({ max_redemptions_per_customer: 2 }, 5);
    const none = await redeem([codes[0]!]);
    expect(none.status).toBe(409);
    expect(none.text).toContain('customer_required');
    const answers = await Promise.all(codes.map((code) => redeem([code], { customer_id: 'CARD-1' })));
    console.log(answers.map((a) => a.status).join(','), answers.find((a) => a.status !== 200)?.text);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
  });
});
