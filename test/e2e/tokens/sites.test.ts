import { describe, expect, it } from 'vitest';
import { hashToken, issueToken, newToken } from '../../../functions/http/tokens.ts';
import { saveApiKey } from '../../../functions/data/api-keys.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { send, type PosBody } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { codeItemsOf, eventsOf, posTransactionsOf } from '../../support/records.ts';

/**
 * Tills bound to their sites (PRODUCT.md, "Accounts and tokens"): a pos token created with
 * `--site` voids, redeems and checks for those site_ids only, compared exactly; anywhere else
 * `403` in the pos envelope (checked against the OpenAPI document by `send`), with a cashier text
 * naming the site, and nothing written. A token without sites, and a key written before sites
 * existed, serve every site. Would catch: a bound till served at another store (it could pre-void
 * that store's future transactions), a site compared loosely (case, white space), a refusal that
 * still wrote, a bound till refused at its own site.
 */
const ctx = useLocalApi();

type Operation = 'voidTransaction' | 'redeemCodes' | 'validateCodes';
const paths = { voidTransaction: '/v2.0/voided_transactions', redeemCodes: '/v2.0/redeemed_codes', validateCodes: '/v2.0/validated_codes' } as const;
const nouns = { voidTransaction: 'Void', redeemCodes: 'Redemption', validateCodes: 'Check' } as const;

const tillFor = async (sites?: string[]) => (await issueToken(ctx.account.accountId, 'Till 3, Main Street', 'pos', sites === undefined ? {} : { sites })).token;

async function anIssuedCode(): Promise<string> {
  const created = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
  expect(created.status, created.text).toBe(201);
  const id = created.json.code_generator.id;
  const issued = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count: 1 } }));
  expect(issued.status, issued.text).toBe(201);
  return issued.json.codes[0]!;
}

const at = async (operation: Operation, token: string, siteId: string, posTransactionId: string) => {
  const transaction = { site_id: siteId, pos_transaction_id: posTransactionId, ...(operation === 'voidTransaction' ? {} : { codes: [await anIssuedCode()] }) };
  return send(ctx.api, token, ({ pos }) => pos.POST(paths[operation], { body: { transaction: transaction as PosBody<'redeemCodes'>['transaction'] } }));
};

const operations: Operation[] = ['voidTransaction', 'redeemCodes', 'validateCodes'];

describe('a till bound to sites', () => {
  it.each(operations)('%s: refused at another site (403, the site named, nothing written), served at its own', async (operation) => {
    const till = await tillFor(['S-0042', 'S-0043']);
    for (const other of ['S-0044', 's-0042', 'S-0042 ', 'S-004']) {
      const refused = await at(operation, till, other, `T-${other}`);
      expect(refused.status, refused.text).toBe(403);
      expect(refused.json).toEqual({
        transaction: {
          errors: [
            {
              message: `This token is bound to other sites than ${JSON.stringify(other)}; use the token of a till of that site, or ask the operator to bind this one to it`,
            },
          ],
          display_messages: [
            {
              message: `${nouns[operation]} refused: this till's token is not allowed at site ${other}. Ask a manager to give the till a token for this site.`,
              message_id: 'site_not_allowed',
              message_content: { request_id: refused.headers.get('x-request-id') },
              priority: 1,
            },
          ],
        },
      });
    }
    // Nothing written: no transaction, no event, the codes free.
    expect(await posTransactionsOf(ctx.account.accountId)).toEqual([]);
    expect((await eventsOf(ctx.account.accountId)).filter((event) => !['code_generator.created', 'codes.issued'].includes(event.type))).toEqual([]);
    expect((await codeItemsOf(ctx.account.accountId)).filter((code) => code.holder !== undefined)).toEqual([]);

    for (const own of ['S-0042', 'S-0043']) {
      const served = await at(operation, till, own, `T-${own}`);
      expect(served.status, served.text).toBe(200);
    }
  });

  it.each(operations)('%s: a pos token without sites, and a key written before sites existed, serve every site', async (operation) => {
    const unbound = await tillFor();
    const legacy = newToken();
    await saveApiKey({
      token_hash: hashToken(legacy),
      key_id: `key_legacy${Date.now().toString(16)}`,
      account_id: ctx.account.accountId,
      name: 'written before sites',
      scope: 'pos',
      created_at: new Date().toISOString(),
    });
    for (const [token, site] of [
      [unbound, 'S-0001'],
      [unbound, 'anywhere at all'],
      [legacy, 'S-0002'],
    ] as const) {
      const served = await at(operation, token, site, `T-${Math.random().toString(36).slice(2)}`);
      expect(served.status, served.text).toBe(200);
    }
  });

  it('a bound till cannot pre-void another store’s future transaction: the other store redeems on it afterwards', async () => {
    const mine = await tillFor(['S-0042']);
    const theirs = await tillFor(['S-0099']);
    const voided = await at('voidTransaction', mine, 'S-0099', 'T-FUTURE');
    expect(voided.status, voided.text).toBe(403);
    const redeemed = await at('redeemCodes', theirs, 'S-0099', 'T-FUTURE');
    expect(redeemed.status, redeemed.text).toBe(200);
  });
});
