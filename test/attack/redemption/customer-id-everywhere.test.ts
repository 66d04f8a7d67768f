import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import codesRedemption from '../../../functions/http/schemas/codesRedemption.generated.ts';
import { routes } from '../../../functions/routes.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, type HttpResponse } from '../../support/http.ts';
import { failingDynamoOperation } from '../support.ts';
import { useLoggedApi } from '../logged-api.ts';

/**
 * A customer id (`transaction.customer_id`) is never logged and never returned (PRODUCT.md,
 * "Counting"). A run through the local server, with logging at DEBUG and Powertools' event
 * logging switched on in the environment (as an operator debugging a stage might), sends a
 * marker as the customer id of every till route through successes, refusals, client errors (a
 * too-long or mistyped customer id, malformed JSON, a body too large, another media type, no
 * token, a token of another scope) and server faults; then every line written to stdout, stderr,
 * the console and the local gateway's log, and every response (status line, headers and body),
 * is searched for it.
 *
 * Until the redemption schema declares `customer_id`, the pos host drops it as an unknown key
 * (a too-long or mistyped one then answers as if absent); once it does, those answer 422 naming
 * `transaction.customer_id`. The test expects whichever the schema says, so it holds on both sides
 * of that change.
 *
 * To extend it: a new route whose body may carry a customer id joins CUSTOMER_ROUTES.
 */
const CUSTOMER_ROUTES = ['redeemCodes', 'validateCodes', 'voidTransaction'] as const;
type TillPath = '/v2.0/redeemed_codes' | '/v2.0/validated_codes' | '/v2.0/voided_transactions';

/** Whether the redemption body declares the field (else the lenient pos host drops it). */
const knowsCustomerId = Object.hasOwn(codesRedemption.schema.properties, 'customer_id');

/** What must never be seen, and pieces of it (a log line might hold a part). */
const MARKER = `LOYALTY-${randomUUID()}`;
/** A mistyped customer id: a number (15 digits, so that it is exact), sent as one. */
const NUMBER = Number(`9${MARKER.replace(/\D/g, '').padEnd(14, '7').slice(0, 14)}`);
/**
 * Its base64 at each of the three alignments too (API Gateway hands the function the body in
 * base64): the characters that depend on the marker's bytes alone.
 */
const base64Forms = (text: string) =>
  [0, 1, 2].map((shift) => {
    const encoded = Buffer.concat([Buffer.alloc(shift, 0x20), Buffer.from(text)]).toString('base64');
    return encoded.slice(shift === 0 ? 0 : 4, -4);
  });
const PIECES = [MARKER, MARKER.slice(8, 24), MARKER.slice(-12), String(NUMBER), ...base64Forms(MARKER)];

const logged = useLoggedApi({ logEvent: true });
const responses: { readonly what: string; readonly response: HttpResponse }[] = [];

/** Every request of one DynamoDB operation answers with an error of `type`. */
const failing = (operation: string, status: number, type: string) => failingDynamoOperation(logged.transport, operation, status, type);

/** One till request, with `token` (none when null); answers are checked here, not against the documents (the e2e suite does that). */
async function tillAs(what: string, path: TillPath, body: unknown, token: string | null, headers: Record<string, string> = {}) {
  const response = await call(logged.api, 'pos', 'POST', path, { ...(token === null ? {} : { token }), body, headers, checkOpenApi: false });
  responses.push({ what, response });
  return response;
}

/** The messages of a pos error body. */
const messagesOf = (response: HttpResponse): string[] => (response.json?.transaction?.errors ?? []).map((e: { message: string }) => e.message);

describe('customer ids', () => {
  it('every till route whose body may carry one is walked below', () => {
    const pos = routes.filter((route) => route.host === 'pos' && route.method === 'POST').map((route) => route.operationId);
    expect([...pos].sort()).toEqual([...CUSTOMER_ROUTES].sort());
  });

  it('appear in no log line and no response of any till route, in success, refusal, client-error and server-fault paths', async () => {
    const account = await newAccount();
    const coreOnly = await newAccount('core');
    const created = await call(logged.api, 'core', 'POST', '/v1.0/codegen', {
      token: account.token,
      body: { code_generator: { generation_type: 'tillgate', code_length: 10, prefix: 'WIN-', store_id: 1 } },
    });
    const generatorId = created.json.code_generator.id as number;
    const issued = await call(logged.api, 'core', 'POST', `/v1.0/codegen/${generatorId}/codes`, { token: account.token, body: { count: 6 } });
    expect(issued.status).toBe(201);
    const codes = issued.json.codes as string[];
    const code = (i: number) => codes[i]!;
    const till = (what: string, path: TillPath, body: unknown, extra: { token?: string | null; headers?: Record<string, string> } = {}) =>
      tillAs(what, path, body, extra.token === undefined ? account.token : extra.token, extra.headers);
    const sale = (id: string, fields: Record<string, unknown>) => ({ transaction: { site_id: 'S-1', pos_transaction_id: id, ...fields } });
    const withCustomer = (id: string, codeList: readonly string[], customerId: unknown = MARKER) => sale(id, { codes: codeList, customer_id: customerId });
    /** What a customer id the schema must refuse gets: 422 naming the field once the field exists, else it is dropped. */
    const refusedOr = (acceptedStatus: number) => (knowsCustomerId ? 422 : acceptedStatus);

    for (const [path, accepted] of [
      ['/v2.0/validated_codes', 200],
      ['/v2.0/redeemed_codes', 200],
    ] as const) {
      const label = path.slice('/v2.0/'.length);
      // Success, and its retry (the redemption's retry answers from what the transaction holds).
      expect((await till(`${label} success`, path, withCustomer(`T-${label}`, [code(0)]))).status).toBe(accepted);
      expect((await till(`${label} retry`, path, withCustomer(`T-${label}`, [code(0)]))).status).toBe(accepted);
      // A code not issued (422), with the customer id beside it.
      expect((await till(`${label} unknown code`, path, withCustomer(`T-${label}-unknown`, ['WIN-NOTISSUED']))).status).toBe(422);
      // Client errors that name another field: the customer id rides along.
      const missingSite = { transaction: { pos_transaction_id: `T-${label}-nosite`, codes: [code(1)], customer_id: MARKER } };
      const noSite = await till(`${label} without site`, path, missingSite);
      expect(noSite.status).toBe(422);
      expect(messagesOf(noSite).join(' ')).toContain('transaction.site_id');
      // Too long (129 characters and more), empty, and of the wrong type with the marker inside.
      const bad: [string, unknown][] = [
        ['too long', `${MARKER}${'9'.repeat(129)}`],
        ['just too long', `${MARKER}${'9'.repeat(129 - MARKER.length)}`],
        ['empty', ''],
        ['an array', [MARKER]],
        ['an object', { card: MARKER }],
        ['a number', NUMBER],
      ];
      for (const [what, customerId] of bad) {
        // A check writes nothing, and a refused redemption writes nothing: one fresh sale and code each.
        const response = await till(`${label} customer id ${what}`, path, withCustomer(`T-${label}-${what}`, [code(2)], customerId));
        expect(response.status, `${label}: customer id ${what}`).toBe(refusedOr(accepted));
        if (response.status === 422) expect(messagesOf(response).join(' ')).toContain('transaction.customer_id');
        // A redemption the schema let through holds code 2: give it back for the next case.
        if (response.status === 200 && path === '/v2.0/redeemed_codes') {
          expect((await till('void releasing', '/v2.0/voided_transactions', sale(`T-${label}-${what}`, { customer_id: MARKER }))).status).toBe(200);
        }
      }
      // Malformed JSON (400), a body over 16 KiB (413), another media type (415), no token (401), a core token (403).
      const text = JSON.stringify(withCustomer(`T-${label}-raw`, [code(3)]));
      expect((await till(`${label} malformed`, path, text.slice(0, -2))).status).toBe(400);
      expect((await till(`${label} too large`, path, JSON.stringify(withCustomer(`T-${label}-big`, [code(3)], MARKER.repeat(500))))).status).toBe(413);
      expect((await till(`${label} text/plain`, path, text, { headers: { 'Content-Type': 'text/plain' } })).status).toBe(415);
      expect((await till(`${label} no token`, path, withCustomer(`T-${label}-anon`, [code(3)]), { token: null })).status).toBe(401);
      expect((await till(`${label} core token`, path, withCustomer(`T-${label}-core`, [code(3)]), { token: coreOnly.token })).status).toBe(403);
      // Server faults on the codes' read: a throttled database (503) and a bug (500), whose error is logged in full.
      for (const [status, type, expected] of [
        [400, 'ThrottlingException', 503],
        [400, 'ValidationException', 500],
      ] as const) {
        const spy = failing('BatchGetItem', status, type);
        expect((await till(`${label} fault ${expected}`, path, withCustomer(`T-${label}-fault-${expected}`, [code(3)]))).status).toBe(expected);
        spy.mockRestore();
      }
    }

    // Another transaction holding the code (409), then the void of the customer's sale, its retry, and a void's faults.
    expect((await till('redemption held by another', '/v2.0/redeemed_codes', withCustomer('T-other', [code(0)]))).status).toBe(409);
    expect((await till('void', '/v2.0/voided_transactions', sale('T-redeemed_codes', { customer_id: MARKER }))).status).toBe(200);
    expect((await till('void retry', '/v2.0/voided_transactions', sale('T-redeemed_codes', { customer_id: MARKER }))).status).toBe(200);
    expect((await till('void without site', '/v2.0/voided_transactions', { transaction: { pos_transaction_id: 'V', customer_id: MARKER } })).status).toBe(422);
    for (const [status, type, expected] of [
      [400, 'ThrottlingException', 503],
      [400, 'ValidationException', 500],
    ] as const) {
      const spy = failing('TransactWriteItems', status, type);
      expect((await till(`void fault ${expected}`, '/v2.0/voided_transactions', sale(`V-fault-${expected}`, { customer_id: MARKER }))).status).toBe(expected);
      spy.mockRestore();
    }

    const statuses = new Set(responses.map(({ response }) => response.status));
    expect([...statuses].sort()).toEqual([200, 400, 401, 403, 409, 413, 415, 422, 500, 503]);

    // Every response: status, headers and body.
    for (const { what, response } of responses) {
      const whole = `${response.status}\n${[...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n')}\n\n${response.text}`;
      for (const piece of PIECES) expect(whole.includes(piece), `${what}: the response holds the customer id`).toBe(false);
    }

    const lines = logged.captured
      .join('\n')
      .split('\n')
      .filter((line) => line.trim() !== '');
    // The capture saw the request line of every till request and the error lines of the faults.
    expect(lines.filter((line) => line.includes('"message":"request"') && line.includes('"path":"/v2.0/')).length).toBeGreaterThanOrEqual(responses.length);
    expect(lines.filter((line) => line.includes('request failed')).length).toBeGreaterThanOrEqual(6);
    for (const piece of PIECES) expect(lines.filter((line) => line.includes(piece))).toEqual([]);
  });
});
