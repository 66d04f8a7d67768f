import { describe, expect, it } from 'vitest';
import { routes } from '../../../functions/routes.ts';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { failingDynamoOperation } from '../support.ts';
import { useLoggedApi } from '../logged-api.ts';
import { call } from '../../support/http.ts';

/**
 * A promotion code is worth money: no log line holds one (PRODUCT.md). A run through the local
 * server, with logging at DEBUG (and Powertools' event logging switched on in the environment), issues codes and drives every route that carries a code in its
 * path or body through successes, client errors (404, 405, unknown paths) and server faults;
 * then every line written to stdout, stderr, the console and the local gateway's log is searched
 * for every code, in any case.
 *
 * To extend it: a new route that carries codes gets a scenario in SCENARIOS (the first test
 * fails until it has one), as redeemCodes and validateCodes have.
 */
type Account = Awaited<ReturnType<typeof newAccount>>;
interface Issued {
  readonly generatorId: number;
  readonly codes: readonly string[];
}
type Scenario = (api: LocalApi, account: Account, issued: readonly Issued[]) => Promise<void>;

/** Routes whose body carries codes (their paths do not say so). */
const CODE_BODY_ROUTES = ['redeemCodes', 'validateCodes'];

const codesOf = (issued: readonly Issued[]) => issued.flatMap((i) => i.codes);

/** A redemption or a check of the issued codes in their body: successes, refusals, client errors and server faults. */
const tillScenario =
  (path: '/v2.0/redeemed_codes' | '/v2.0/validated_codes'): Scenario =>
  async (api, account, issued) => {
    const send = (body: unknown, token: string | undefined = account.token) => call(api, 'pos', 'POST', path, { ...(token ? { token } : {}), body });
    const sale = (id: string, codes: readonly string[]) => ({ transaction: { site_id: 'S-1', pos_transaction_id: id, codes } });
    const all = codesOf(issued);
    // One sale per account: the check (run after the redemption) asks about the codes its sale holds.
    const id = `T-${account.accountId}`;
    // Success (and its retry), typed in lower case, a refusal by another transaction (409 when redeemed), unknown codes (422).
    expect((await send(sale(id, all))).status).toBe(200);
    expect(
      (
        await send(
          sale(
            id,
            all.map((code) => code.toLowerCase()),
          ),
        )
      ).status,
    ).toBe(200);
    expect([200, 409]).toContain((await send(sale(`${id}-other`, all))).status);
    expect(
      (
        await send(
          sale(
            `${id}-unknown`,
            all.map((code) => `${code}X`),
          ),
        )
      ).status,
    ).toBe(422);
    // No token (401), a body without its root (400), a transaction without its site (422), another method (405).
    expect((await send(sale(id, all), '')).status).toBe(401);
    expect((await send({ codes: all })).status).toBe(400);
    expect((await send({ transaction: { pos_transaction_id: id, codes: all } })).status).toBe(422);
    expect((await call(api, 'pos', 'GET', path, { token: account.token })).status).toBe(405);
    // Server faults on the codes' read: a throttled database (503) and a bug (500), whose error is logged in full.
    for (const [status, type, expected] of [
      [400, 'ThrottlingException', 503],
      [400, 'ValidationException', 500],
    ] as const) {
      const spy = failing('BatchGetItem', status, type);
      expect((await send(sale(`${id}-fault-${expected}`, all))).status).toBe(expected);
      spy.mockRestore();
    }
  };

const SCENARIOS: Record<string, Scenario> = {
  getCode: async (api, account, issued) => {
    for (const { generatorId, codes } of issued) {
      for (const code of codes) {
        for (const typed of [code, code.toLowerCase()]) {
          const response = await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId}/codes/${encodeURIComponent(typed)}`, { token: account.token });
          expect(response.status).toBe(200);
        }
        // Another generator's (404), a bad id (400), no token (401), another method (405), an unknown path (404).
        expect((await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId + 1_000_000}/codes/${code}`, { token: account.token })).status).toBe(404);
        expect((await call(api, 'core', 'GET', `/v1.0/codegen/x${generatorId}/codes/${code}`, { token: account.token })).status).toBe(400);
        expect((await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId}/codes/${code}`)).status).toBe(401);
        expect((await call(api, 'core', 'DELETE', `/v1.0/codegen/${generatorId}/codes/${code}`, { token: account.token })).status).toBe(405);
        expect((await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId}/codes/${code}/x`, { token: account.token })).status).toBe(404);
      }
    }
  },
  listCodeRedemptions: async (api, account, issued) => {
    for (const { generatorId, codes } of issued) {
      for (const code of codes) {
        for (const typed of [code, code.toLowerCase()]) {
          const response = await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId}/codes/${encodeURIComponent(typed)}/redemptions?limit=1`, {
            token: account.token,
          });
          expect(response.status).toBe(200);
        }
        // Another generator's (404), a bad cursor (400), no token (401), another method (405).
        expect((await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId + 1_000_000}/codes/${code}/redemptions`, { token: account.token })).status).toBe(
          404,
        );
        expect((await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId}/codes/${code}/redemptions?cursor=${code}`, { token: account.token })).status).toBe(
          400,
        );
        expect((await call(api, 'core', 'GET', `/v1.0/codegen/${generatorId}/codes/${code}/redemptions`)).status).toBe(401);
        expect((await call(api, 'core', 'DELETE', `/v1.0/codegen/${generatorId}/codes/${code}/redemptions`, { token: account.token })).status).toBe(405);
      }
    }
  },
  redeemCodes: tillScenario('/v2.0/redeemed_codes'),
  validateCodes: tillScenario('/v2.0/validated_codes'),
};

const logged = useLoggedApi({ logEvent: true });

/** Every request of one DynamoDB operation answers with an error of `type`. */
const failing = (operation: string, status: number, type: string) => failingDynamoOperation(logged.transport, operation, status, type);

describe('promotion codes in logs', () => {
  it('every route that carries a code has a scenario below', () => {
    const carrying = routes.filter((route) => route.path.includes('{code}') || CODE_BODY_ROUTES.includes(route.operationId));
    expect(carrying.length).toBeGreaterThan(0);
    expect(carrying.filter((route) => !SCENARIOS[route.operationId]).map((route) => route.operationId)).toEqual([]);
  });

  it('appear in no log line of a run that issued, looked up (and, with its scenario, redeemed) them', async () => {
    const account = await newAccount();
    const issued: Issued[] = [];
    for (const generator of [
      { generation_type: 'tillgate', code_length: 10, prefix: 'WIN-', store_id: 1 },
      { generation_type: 'numeric', code_length: 12, store_id: 1 },
    ]) {
      const created = await call(logged.api, 'core', 'POST', '/v1.0/codegen', { token: account.token, body: { code_generator: generator } });
      const generatorId = created.json.code_generator.id as number;
      const response = await call(logged.api, 'core', 'POST', `/v1.0/codegen/${generatorId}/codes`, { token: account.token, body: { count: 5 } });
      expect(response.status).toBe(201);
      issued.push({ generatorId, codes: response.json.codes });
    }

    for (const route of routes) await SCENARIOS[route.operationId]?.(logged.api, account, issued);

    // Server faults on the code lookup: a throttled database (503) and a bug (500), whose error is logged in full.
    const [first] = issued;
    for (const [status, type, expected] of [
      [400, 'ThrottlingException', 503],
      [400, 'ValidationException', 500],
    ] as const) {
      const spy = failing('GetItem', status, type);
      const code = first!.codes[0]!;
      // The token lookup is a GetItem too: the fault hits it first, and the route's own read when the token is cached.
      const response = await call(logged.api, 'core', 'GET', `/v1.0/codegen/${first!.generatorId}/codes/${code}`, { token: account.token });
      expect(response.status).toBe(expected);
      spy.mockRestore();
    }

    const lines = logged.captured
      .join('\n')
      .split('\n')
      .filter((line) => line.trim() !== '');
    // The capture saw the request lines, the gateway lines and the fault's error line.
    expect(lines.filter((line) => line.includes('"message":"request"')).length).toBeGreaterThan(20);
    expect(lines.some((line) => line.includes('"message":"gateway"') && line.includes('"status":405'))).toBe(true);
    expect(lines.some((line) => line.includes('request failed'))).toBe(true);
    expect(lines.some((line) => line.includes('"path":"/v1.0/codegen/') && line.includes('/codes/{code}"'))).toBe(true);

    const lower = lines.map((line) => line.toLowerCase());
    for (const code of codesOf(issued)) {
      const generated = code.replace(/^WIN-/, '').toLowerCase();
      const holding = lower.filter((line) => line.includes(generated));
      expect(holding, `code ${code} in a log line`).toEqual([]);
    }
  });
});
