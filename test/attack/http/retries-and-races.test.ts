import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../../local/server.ts';
import { newAccount } from '../../support/accounts.ts';
import { call, type HttpResponse } from '../../support/http.ts';
import { startTestApi } from '../../support/local-api.ts';
import { codeGeneratorsOf, eventsOf, voidsOf } from '../../support/records.ts';

/**
 * Retries and races as flaky till networks make them: many copies of one request at once, many
 * different requests at once. Counts in the tables afterwards must be exact, and every copy of
 * a request must get the same answer, byte for byte.
 */
const N = 24;

let api: LocalApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

const times = <T>(n: number, make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));
const generator = (storeId: number) => ({ code_generator: { generation_type: 'tillgate', code_length: 10, store_id: storeId } });

function expectOneAnswer(responses: HttpResponse[], status: number) {
  expect(responses.map((r) => r.status)).toEqual(responses.map(() => status));
  expect(new Set(responses.map((r) => r.text)).size).toBe(1);
  // One request did the work; every other copy was told it is a replay.
  expect(responses.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
  expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(responses.length - 1);
}

describe('concurrency and retries', () => {
  it(`${N} identical voids at once: one void, one event, ${N} identical 200 answers`, async () => {
    const account = await newAccount();
    const body = { transaction: { site_id: 'site-7', pos_transaction_id: 'T-1001', receipt_id: 'R-9' } };

    const responses = await times(N, () => call(api, 'pos', 'POST', '/v2.0/voided_transactions', { token: account.token, body }));

    expectOneAnswer(responses, 200);
    const [voids, events] = await Promise.all([voidsOf(account.accountId), eventsOf(account.accountId)]);
    expect(voids).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: voids[0]!.event_id, type: 'transaction.voided', resource_id: 'site-7/T-1001' });
    expect(responses[0]!.json.transaction.display_messages[0].message_content.event_id).toBe(events[0]!.id);
  });

  it(`${N} voids at once whose other fields differ (agents upgraded mid-retry): still one void, the first answer for all`, async () => {
    const account = await newAccount();
    const responses = await times(N, (i) =>
      call(api, 'pos', 'POST', '/v2.0/voided_transactions', {
        token: account.token,
        body: { transaction: { site_id: 's', pos_transaction_id: 'p', posagent_version: `1.${i}`, receipt_id: `R-${i}` } },
      }),
    );
    expectOneAnswer(responses, 200);
    expect(await voidsOf(account.accountId)).toHaveLength(1);
    expect(await eventsOf(account.accountId)).toHaveLength(1);
  });

  it(`${N} creates with one Idempotency-Key at once: one generator, one event, ${N} identical 201 answers`, async () => {
    const account = await newAccount();

    const responses = await times(N, () =>
      call(api, 'core', 'POST', '/v1.0/codegen', { token: account.token, body: generator(5), headers: { 'Idempotency-Key': 'retry-me' } }),
    );

    expectOneAnswer(responses, 201);
    expect(new Set(responses.map((r) => r.headers.get('location'))).size).toBe(1);
    const [generators, events] = await Promise.all([codeGeneratorsOf(account.accountId), eventsOf(account.accountId)]);
    expect(generators).toHaveLength(1);
    expect(events).toHaveLength(1);
    expect(responses[0]!.json.code_generator.id).toBe(generators[0]!.id);
    expect(events[0]).toMatchObject({ type: 'code_generator.created', resource_id: String(generators[0]!.id) });
  });

  it('creates racing on one Idempotency-Key with two different bodies: one generator; its body answers 201, the other 409', async () => {
    const account = await newAccount();

    const responses = await times(N, (i) =>
      call(api, 'core', 'POST', '/v1.0/codegen', { token: account.token, body: generator(1 + (i % 2)), headers: { 'Idempotency-Key': 'k' } }),
    );

    const generators = await codeGeneratorsOf(account.accountId);
    expect(generators).toHaveLength(1);
    expect(await eventsOf(account.accountId)).toHaveLength(1);
    const winner = generators[0]!.store_id;
    responses.forEach((response, i) => expect(response.status).toBe(1 + (i % 2) === winner ? 201 : 409));
    expect(new Set(responses.filter((r) => r.status === 201).map((r) => r.text)).size).toBe(1);
  });

  it(`${N} different creates at once: ${N} generators with distinct ids, each with exactly one event`, async () => {
    const account = await newAccount();

    const responses = await times(N, (i) =>
      call(api, 'core', 'POST', '/v1.0/codegen', {
        token: account.token,
        body: generator(i + 1),
        // half of them with keys of their own
        ...(i % 2 ? { headers: { 'Idempotency-Key': `own-${i}` } } : {}),
      }),
    );

    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 201));
    const ids = responses.map((r) => r.json.code_generator.id as number);
    expect(new Set(ids).size).toBe(N);
    const [generators, events] = await Promise.all([codeGeneratorsOf(account.accountId), eventsOf(account.accountId)]);
    expect(generators.map((g) => g.id).sort()).toEqual([...ids].sort());
    expect(events.map((e) => e.resource_id).sort()).toEqual(ids.map(String).sort());
    expect(new Set(events.map((e) => e.id)).size).toBe(N);
  });

  it(`${N} different voids, each sent three times at once: ${N} voids and ${N} events`, async () => {
    const account = await newAccount();
    const responses = await times(3 * N, (i) =>
      call(api, 'pos', 'POST', '/v2.0/voided_transactions', {
        token: account.token,
        body: { transaction: { site_id: 'site', pos_transaction_id: `T-${i % N}` } },
      }),
    );
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    for (let t = 0; t < N; t++) {
      const copies = responses.filter((_, i) => i % N === t).map((r) => r.text);
      expect(new Set(copies).size).toBe(1);
    }
    const [voids, events] = await Promise.all([voidsOf(account.accountId), eventsOf(account.accountId)]);
    expect(voids).toHaveLength(N);
    expect(events.map((e) => e.id).sort()).toEqual(voids.map((v) => v.event_id).sort());
  });

  it(`${N} DELETEs of one event at once: exactly one 200 with a one-space body, the rest 404; the event is gone`, async () => {
    const account = await newAccount();
    await call(api, 'core', 'POST', '/v1.0/codegen', { token: account.token, body: generator(1) });
    const [event] = await eventsOf(account.accountId);

    const responses = await times(N, () => call(api, 'core', 'DELETE', `/v1.0/events/${event!.id}`, { token: account.token }));

    const acknowledged = responses.filter((r) => r.status === 200);
    expect(acknowledged).toHaveLength(1);
    expect(acknowledged[0]!.text).toBe(' ');
    const missing = responses.filter((r) => r.status === 404);
    expect(missing).toHaveLength(N - 1);
    for (const r of missing) expect(r.json).toEqual({ errors: [{ message: `Event ${event!.id} not found` }] });
    expect(await eventsOf(account.accountId)).toEqual([]);
    expect(await codeGeneratorsOf(account.accountId)).toHaveLength(1);
  });
});
