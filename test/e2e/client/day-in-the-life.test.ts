import '../../support/webhooks/env.ts';
import { describe, expect, it } from 'vitest';
import { issueToken } from '../../../functions/http/tokens.ts';
import { dayInTheLife } from '../../../examples/day-in-the-life.ts';
import { readmeExample } from '../../../examples/readme.ts';
import { newAccount } from '../../support/accounts.ts';
import { checkedFetch } from '../../support/client.ts';
import { RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { useWebhookPipeline } from '../../support/local-webhooks.ts';
import { eventsOf } from '../../support/records.ts';

/**
 * examples/day-in-the-life.ts, the README's day written against the typed client alone, run against
 * the local API with the webhook pipeline and a verifying receiver; every answer is checked against
 * the OpenAPI documents on the way (test/support/client.ts).
 */
const ctx = useLocalApi();
const pipeline = useWebhookPipeline();

describe('examples/day-in-the-life.ts', () => {
  it("runs the README's day end to end through the typed client", async () => {
    const { token: till } = await issueToken(ctx.account.accountId, 'Till 3', 'pos');
    const other = await newAccount();
    const path = `/hooks/day-${process.pid}`;

    const day = await dayInTheLife(ctx.api.urls, ctx.account.token, {
      till,
      otherAccount: other.token,
      webhook: { url: `${pipeline.receiver.url}${path}`, secret: (secret) => pipeline.receiver.secrets(path, [secret]) },
      fetch: checkedFetch(ctx.api),
      deliveries: { everyMs: 100, forMs: 30_000 },
    });

    expect(day.codes).toHaveLength(5);
    expect(day.code).toMatch(/^WIN-[23456789ABCDEFGHJKLMNPQRSTUVWXYZ]{8}$/);
    expect(day.redeemedAt).toMatch(RFC3339_MILLIS_UTC);
    expect(day.voided.voidedAt).toMatch(RFC3339_MILLIS_UTC);
    // The promotion: 10 % off 25.00 EUR is 2.50 EUR, as the check and the redemption tell the cashier.
    expect(day.validUntil.created).toMatch(/^\d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    expect(Date.parse(day.validUntil.created) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(day.off).toEqual({ checked: `Code ${day.code} is valid: 2.50 EUR off`, redeemed: `Code ${day.code} redeemed: 2.50 EUR off` });
    // The second flyer: below the minimum at noon, expired once the back office ended the promotion.
    // The moment in words: `26 November 2026 01:30:12 UTC`, the seconds shown when the moment has them.
    const { ended } = day.validUntil;
    const date = new Date(ended).toLocaleDateString('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'long', year: 'numeric' });
    const time = ended.endsWith(':00.000Z') ? ended.slice(11, 16) : ended.slice(11, 19);
    expect(day.secondFlyer).toEqual({
      noon: `basket_below_minimum: Code ${day.codes[1]} applies only to sales of 20.00 EUR or more; this sale is 18.50 EUR. Add items, or do not accept it.`,
      evening: `code_expired: Code ${day.codes[1]} expired on ${date} ${time} UTC. Do not accept it.`,
    });
    expect(day.transcript).toEqual([
      'create the generator: 201',
      'issue 5 codes: 201',
      'issue again, same key: 201',
      'register a webhook endpoint: 201',
      'look the code up: 200',
      'the till asks for codes: 403',
      'check the code with a basket of 25.00 EUR: 200',
      'redeem it in sale 1234: 200',
      'redeem it in sale 1240: 409',
      'redeem the second code in sale 1241, 18.50 EUR: 409',
      'list the redeemed codes: 200',
      'read the generator: 200',
      'end it now with If-Match: 200',
      'lift the end date with the old If-Match: 412',
      'redeem the second code in sale 1242, 26.00 EUR: 409',
      'void sale 1234: 200',
      'void it again: 200',
      'look the code up again: 200',
      'redeem it in the voided sale: 409',
      'list the deliveries: 200',
      'export the codes: 202',
      'read the export, completed: 200',
      'download the file: 200',
      'the first page of the feed: 200',
      'the second page: 200',
      ...day.acknowledged.map((id) => `acknowledge event ${id}: 200`),
      'the feed, at the end: 200',
      'acknowledge the first event again: 404',
      'another account reads the generator: 404',
      'another account looks the code up: 404',
      'another account lists its generators: 200',
      'start an issuance job of 1,000 codes: 202',
      'the issuance job: completed',
      'a code length out of range: 422',
      'a void without a valid token: 401',
    ]);
    // The export: the 5 codes, as the file has them after its header row.
    expect(day.file).toEqual({
      rows: 5,
      header: 'code,code_generator_id,issued_at,times_redeemed,max_redemptions_per_code,last_redeemed_at,site_id,pos_transaction_id',
      lines: 5,
    });
    // Every state change of the day was an event, acknowledged: created, issued, redeemed, updated, voided, released, exported.
    expect(day.acknowledged).toHaveLength(7);
    expect(day.acknowledged).toContain(day.voided.eventId);
    // Left in the feed: the evening's issuance job, which completed after the feed was read.
    expect(day.issuanceJob).toEqual({ count: 1000, issued: 1000, completedAt: expect.stringMatching(RFC3339_MILLIS_UTC) });
    expect((await eventsOf(ctx.account.accountId)).map((event) => `${event.type} ${event.created_at}`)).toEqual([
      `codes.issued ${day.issuanceJob.completedAt}`,
    ]);
    // The receiver got the void and the release, each verified with the endpoint's secret.
    expect(day.endpoint?.deliveries.map(({ event_type, status }) => `${event_type} ${status}`).sort()).toEqual([
      'codes.released succeeded',
      'transaction.voided succeeded',
    ]);
    const received = pipeline.receiver.on(path);
    expect(received.map((delivery) => delivery.json.type).sort()).toEqual(['codes.released', 'transaction.voided']);
    expect(received.every((delivery) => delivery.verifiedWith.length === 1)).toBe(true);
  }, 120_000);

  it("runs the README's few lines of it", async () => {
    await expect(readmeExample(ctx.api.urls.core, ctx.api.urls.pos, ctx.account.token)).resolves.toBeUndefined();
  });
});
