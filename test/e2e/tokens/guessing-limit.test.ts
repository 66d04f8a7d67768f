import { describe, expect, it, vi } from 'vitest';
import { issueToken } from '../../../functions/http/tokens.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';

// The default limit (vitest.config.ts raises it for the fuzzers), read by the functions when they load.
vi.hoisted(() => {
  delete process.env.UNKNOWN_CODE_LIMIT;
});

/**
 * No guessing codes (PRODUCT.md, "Accounts and tokens"), over HTTP with the default limit: 120
 * codes that do not exist, named in redemptions and checks together (each once per request), are
 * answered as usual (422, code_not_found); the request that takes the token past 120 in a minute
 * answers 429 with Retry-After and a cashier text, in the pos envelope the OpenAPI document gives
 * it (checked by `send`). Codes that all exist are still served; another token is not limited.
 * The minute after is test/e2e/tokens/guessing-window.test.ts (a short window) and, on an injected
 * clock, test/attack/tokens/guessing-limit.test.ts. Would catch: a till guessing codes without end
 * (3,000 a minute before), a limit counting a code listed twice twice, a limited token refused
 * for codes that exist, one token's guesses limiting another.
 */
const ctx = useLocalApi();

const unknownCodes = (request: number) => Array.from({ length: 10 }, (_, i) => `NOPE${request}X${i}`);

async function anIssuedCode(): Promise<string> {
  const created = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: winterPromotion } }));
  expect(created.status, created.text).toBe(201);
  const id = created.json.code_generator.id;
  const issued = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count: 3 } }));
  expect(issued.status, issued.text).toBe(201);
  return issued.json.codes;
}

const till = (path: '/v2.0/redeemed_codes' | '/v2.0/validated_codes', token: string, codes: string[], posTransactionId = 'T-1') =>
  send(ctx.api, token, ({ pos }) => pos.POST(path, { body: { transaction: { site_id: 'S-0042', pos_transaction_id: posTransactionId, codes } } }));

describe('the guessing limit: 120 unknown codes a minute per token', () => {
  it('the 121st unknown code is refused with 429; codes that exist are still served; another token is not limited', async () => {
    const [known, second, third] = (await anIssuedCode()) as unknown as [string, string, string];
    const started = Date.now();
    for (let request = 0; request < 12; request++) {
      // Checks and redemptions count together; a code listed again (in any case) counts once.
      const codes = request === 0 ? [...unknownCodes(0), 'nope0x3', 'NOPE0X3'] : unknownCodes(request);
      const path = request % 2 === 0 ? '/v2.0/validated_codes' : '/v2.0/redeemed_codes';
      const answered = await till(path, ctx.account.token, codes.slice(0, 10));
      expect(answered.status, `request ${request + 1}: ${answered.text}`).toBe(422);
      expect(answered.json.transaction.display_messages.map((message: { message_id: string }) => message.message_id)).toEqual(Array(10).fill('code_not_found'));
    }
    // The first request listed 10 distinct codes plus two spellings of one of them: 120 counted so far.
    const refused = await till('/v2.0/redeemed_codes', ctx.account.token, [known, 'NOPE-ONE-MORE']);
    expect(refused.status, refused.text).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(61);
    expect(refused.json).toEqual({
      transaction: {
        errors: [
          {
            message:
              'Too many codes that do not exist were sent with this X-Auth-Token: more than 120 in 60 seconds; requests naming an unknown code are refused until the Retry-After delay has passed (requests whose codes all exist are still served)',
          },
        ],
        display_messages: [
          {
            message: `Redemption paused: this till sent too many codes that do not exist. Wait ${wait} seconds, then try again with codes scanned from the customer's voucher.`,
            message_id: 'too_many_unknown_codes',
            message_content: { request_id: refused.headers.get('x-request-id') },
            priority: 1,
          },
        ],
      },
    });
    const checkRefused = await till('/v2.0/validated_codes', ctx.account.token, ['NOPE-AGAIN']);
    expect(checkRefused.status, checkRefused.text).toBe(429);
    expect(checkRefused.json.transaction.display_messages[0].message).toMatch(/^Check paused: /);
    // The whole run took well under the minute, or the counts above would not all be in one.
    expect(Date.now() - started).toBeLessThan(55_000);

    // Codes that all exist: served, checked and redeemed, while the token is limited.
    expect((await till('/v2.0/validated_codes', ctx.account.token, [known, second])).status).toBe(200);
    const redeemed = await till('/v2.0/redeemed_codes', ctx.account.token, [known, second], 'T-2');
    expect(redeemed.status, redeemed.text).toBe(200);
    // A code that exists but is refused for another reason (held by T-2) is not a guess: 409, not 429.
    expect((await till('/v2.0/redeemed_codes', ctx.account.token, [known, third], 'T-3')).status).toBe(409);

    // Another till's token of the same account: its unknown codes are its own.
    const other = (await issueToken(ctx.account.accountId, 'Till 4', 'pos')).token;
    const answered = await till('/v2.0/validated_codes', other, ['NOPE-FROM-TILL-4']);
    expect(answered.status, answered.text).toBe(422);
  });
});
