import { createTillgate } from '../client/index.ts';

/**
 * The README's "A typed client" example, line for line between the markers (its import aside):
 * test/unit/client/readme.test.ts compares them, and the project's tsc run compiles this file, so
 * the README's lines compile under --strict; test/e2e/client/day-in-the-life.test.ts runs them.
 */
export async function readmeExample(coreUrl: string, posUrl: string, token: string): Promise<void> {
  // README begin
  const { core, pos } = createTillgate({ coreUrl, posUrl, token });
  const created = await core.POST('/v1.0/codegen', {
    params: { header: { 'Idempotency-Key': 'winter-2026' } },
    body: { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'WIN-', store_id: 42 } },
  });
  if (created.status !== 201) throw new Error(`${created.status}: ${JSON.stringify(created.error)}`);
  const issued = await core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id: created.data.code_generator.id } }, body: { count: 5 } });
  if (issued.status !== 201) throw new Error(`${issued.status}: ${JSON.stringify(issued.error)}`);
  const sale = { site_id: 'S-0042', pos_transaction_id: '1234', codes: issued.data.codes.slice(0, 1) };
  const redeemed = await pos.POST('/v2.0/redeemed_codes', { body: { transaction: sale } });
  if (redeemed.status === 409) for (const { message } of redeemed.error.transaction.display_messages) console.log(message);
  // README end
}
