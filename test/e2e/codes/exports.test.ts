import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { call, RFC3339_MILLIS_UTC } from '../../support/http.ts';
import { send } from '../../support/client.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startTestWebhooks } from '../../support/local-webhooks.ts';
import type { LocalWebhooks } from '../../../local/webhooks.ts';
import { findExport } from '../../../functions/data/exports.ts';
import { presignedGet } from '../../../functions/runtime/storage.ts';
import { documents } from '../../../functions/runtime/clients.ts';
import { tableName } from '../../../functions/runtime/config.ts';

/**
 * Exports over HTTP, end to end: POST /v1.0/codegen/{id}/exports → the writeExports worker (the
 * local queue) → the CSV on the local S3 server → GET /v1.0/exports/{id} and its download URL,
 * fetched as curl would. The file, parsed with csv-parse, must equal the list route page for page
 * (all, redeemed, unredeemed), with site and transaction ids holding every character CSV must
 * quote, and multi-use codes. Budget: about 15 s.
 */
const ctx = useLocalApi();
let webhooks: LocalWebhooks;
beforeAll(async () => {
  // The streams too: a multi-use code's times_redeemed reaches the list through the rollUpCodeUses worker.
  webhooks = await startTestWebhooks();
});
afterAll(() => webhooks?.close());

const COLUMNS = ['code', 'code_generator_id', 'issued_at', 'times_redeemed', 'max_redemptions_per_code', 'last_redeemed_at', 'site_id', 'pos_transaction_id'];
/** The oddest ids the pos host accepts: CSV's specials, line breaks of every kind, spaces at the ends, non-ASCII. */
const ODD_SITES = [' S,1 ', 'say "hi"', 'line\nbreak', 'cr\ronly', 'crlf\r\nend', 'Zürich – 東京 😀', '"', ',', ' '];
const ODD_TRANSACTIONS = ['T,1', '"quoted"', 'a\r\nb', '\n', ' lead', 'trail ', 'ünï', 'x""y', 'tab\there'];

const createGenerator = async (fields: Record<string, unknown> = {}, token = ctx.account.token) => {
  const response = await send(ctx.api, token, ({ core }) =>
    core.POST('/v1.0/codegen', { body: { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'EX-', store_id: 7, ...fields } } }),
  );
  expect(response.status, response.text).toBe(201);
  return response.json.code_generator.id as number;
};
const issue = async (id: number, count: number) => {
  const response = await send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen/{id}/codes', { params: { path: { id } }, body: { count } }));
  expect(response.status, response.text).toBe(201);
  return response.json.codes as string[];
};
const redeem = async (codes: string[], site_id: string, pos_transaction_id: string) => {
  const response = await send(ctx.api, ctx.account.token, ({ pos }) =>
    pos.POST('/v2.0/redeemed_codes', { body: { transaction: { site_id, pos_transaction_id, codes } } }),
  );
  expect(response.status, response.text).toBe(200);
};
const createExport = (id: number, body?: { redeemed?: boolean }, headers: { 'Idempotency-Key'?: string } = {}, token = ctx.account.token) =>
  send(ctx.api, token, ({ core }) => core.POST('/v1.0/codegen/{id}/exports', { params: { path: { id }, header: headers }, ...(body ? { body } : {}) }));
const getExport = (id: number, token = ctx.account.token) => send(ctx.api, token, ({ core }) => core.GET('/v1.0/exports/{id}', { params: { path: { id } } }));

/** Polls the export until it has ended (no fixed wait): at most 20 s. */
async function completed(id: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await getExport(id);
    expect(response.status, response.text).toBe(200);
    if (response.json.export.status !== 'running') return response.json.export;
    if (Date.now() > deadline) throw new Error(`export ${id} still running after 20 s`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** The list route's items, every page, as the file's rows (strings; null as empty). */
async function listedRows(id: number, redeemed?: boolean): Promise<string[][]> {
  const rows: string[][] = [];
  let cursor: string | undefined;
  do {
    const response = await send(ctx.api, ctx.account.token, ({ core }) =>
      core.GET('/v1.0/codegen/{id}/codes', {
        params: { path: { id }, query: { limit: 7, ...(cursor ? { cursor } : {}), ...(redeemed !== undefined ? { redeemed } : {}) } },
      }),
    );
    expect(response.status, response.text).toBe(200);
    for (const item of response.json.codes) {
      const values = [
        item.code,
        item.code_generator_id,
        item.issued_at,
        item.times_redeemed,
        item.max_redemptions_per_code,
        item.redeemed_at,
        item.site_id,
        item.pos_transaction_id,
      ];
      rows.push(values.map((value) => (value === null ? '' : String(value))));
    }
    cursor = response.json.next_cursor ?? undefined;
  } while (cursor);
  return rows;
}

async function download(url: string) {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** The index the list reads lags a redemption by about a second (a multi-use code's uses, the rollup): wait until the list shows them all. */
async function listShowsRedeemed(id: number, count: number) {
  const deadline = Date.now() + 10_000;
  while ((await listedRows(id, true)).length < count) {
    if (Date.now() > deadline) throw new Error('the list did not show the redemptions within 10 s');
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe('exports', () => {
  it('the file equals the list route row for row (all, redeemed, unredeemed), quoted as RFC 4180 writes it; export.completed in the feed', async () => {
    const single = await createGenerator();
    const codes = await issue(single, 25);
    for (const [index, site] of ODD_SITES.entries()) await redeem([codes[index]!], site, ODD_TRANSACTIONS[index]!);
    const multi = await createGenerator({ max_redemptions_per_code: 3, prefix: 'MU-' });
    const multiCodes = await issue(multi, 4);
    await redeem([multiCodes[0]!], 'S-1', 'T-multi-1');
    await redeem([multiCodes[0]!], 'S-1', 'T-multi-2');
    await listShowsRedeemed(single, ODD_SITES.length);
    await listShowsRedeemed(multi, 1);

    for (const [generator, redeemed] of [
      [single, undefined],
      [single, true],
      [single, false],
      [multi, undefined],
    ] as const) {
      const accepted = await createExport(generator, redeemed === undefined ? undefined : { redeemed });
      expect(accepted.status, accepted.text).toBe(202);
      const done = await completed(accepted.json.export.id);
      expect(done, JSON.stringify(done)).toMatchObject({ status: 'completed', error: null, code_generator_id: generator });
      const bytes = await download(done.download_url!);
      // No byte-order mark, CRLF line ends, the header row.
      expect(bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]))).toBe(false);
      expect(bytes.toString('utf8').startsWith(`${COLUMNS.join(',')}\r\n`)).toBe(true);
      const parsed = parse(bytes, { bom: false, record_delimiter: '\r\n', relax_quotes: false }) as string[][];
      expect(parsed[0]).toEqual(COLUMNS);
      const listed = await listedRows(generator, redeemed);
      expect(parsed.slice(1)).toEqual(listed);
      expect(done.rows).toBe(listed.length);
    }
    // Quoted only where needed: a plain row has no quote; an odd id is quoted, its quotes doubled.
    const all = (await download((await completed((await createExport(single)).json.export.id)).download_url!)).toString('utf8');
    expect(all).toContain('"say ""hi"""');
    expect(all).toContain(`,"crlf\r\nend",`);
    expect(all).toMatch(/\r\nEX-[A-Z0-9]{8},\d+,[^"\r\n]+,0,1,,,\r\n/);
    // The multi-use code: times_redeemed 2, its holder fields empty.
    const multiFile = (await download((await completed((await createExport(multi)).json.export.id)).download_url!)).toString('utf8');
    expect(multiFile).toContain(`${multiCodes[0]},${multi},`);
    expect(multiFile).toMatch(new RegExp(`${multiCodes[0]},${multi},[^,]+,2,3,,,\\r\\n`));

    const events = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events', { params: { query: { limit: 1000 } } }));
    const completedEvents = events.json.events.filter((event: { type: string }) => event.type === 'export.completed');
    expect(completedEvents).toHaveLength(6);
  });

  it('202 with Location and the running export; GET shows it completed with rows, a fresh download URL and expires_at 7 days on', async () => {
    const generator = await createGenerator({ status: 'inactive' });
    const accepted = await createExport(generator);
    expect(accepted.status, accepted.text).toBe(202);
    const id = accepted.json.export.id;
    expect(accepted.headers.get('location')).toBe(`/v1.0/exports/${id}`);
    expect(accepted.json).toEqual({
      export: {
        id,
        code_generator_id: generator,
        status: 'running',
        rows: 0,
        error: null,
        created_at: expect.stringMatching(RFC3339_MILLIS_UTC),
        completed_at: null,
        download_url: null,
        expires_at: null,
      },
    });
    const done = await completed(id);
    expect(done.rows).toBe(0);
    expect(Date.parse(done.expires_at!) - Date.parse(done.completed_at!)).toBe(7 * 86_400_000);
    expect(done.download_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[a-z0-9-]+\/.*X-Amz-Expires=900/);
    expect((await download(done.download_url!)).toString('utf8')).toBe(`${COLUMNS.join(',')}\r\n`);
    // The event names the export.
    const events = await send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/events', { params: { query: { limit: 1000 } } }));
    expect(
      events.json.events.filter((event: { type: string }) => event.type === 'export.completed').map((event: { resource_id: string }) => event.resource_id),
    ).toEqual([String(id)]);
  });

  it('a download URL is refused once expired (signed through the same code path, 1 second) and when its signature or key is changed', async () => {
    const generator = await createGenerator();
    await issue(generator, 3);
    const done = await completed((await createExport(generator)).json.export.id);
    const url = done.download_url!;
    const tampered = url.replace(/X-Amz-Signature=([0-9a-f])/, (_: string, c: string) => `X-Amz-Signature=${c === '0' ? '1' : '0'}`);
    expect(tampered).not.toBe(url);
    const refusedTampered = await fetch(tampered);
    expect(refusedTampered.status).toBe(403);
    expect(await refusedTampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const otherObject = await fetch(url.replace(/\/([^/?]+)\.csv\?/, '/other.csv?'));
    expect(otherObject.status).toBe(403);
    const unsigned = await fetch(url.split('?')[0]!);
    expect(unsigned.status).toBe(403);

    const record = await findExport(ctx.account.accountId, done.id);
    const short = await presignedGet('exports', record!.object_key!, 1);
    expect((await fetch(short)).status).toBe(200);
    const deadline = Date.now() + 10_000;
    let refused: Response;
    while ((refused = await fetch(short)).status === 200 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('Request has expired');
  });

  it('Idempotency-Key replays the first 202 and creates nothing; the same key with another body is 409', async () => {
    const generator = await createGenerator();
    const first = await createExport(generator, { redeemed: true }, { 'Idempotency-Key': 'export-1' });
    expect(first.status).toBe(202);
    const again = await createExport(generator, { redeemed: true }, { 'Idempotency-Key': 'export-1' });
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    const other = await createExport(generator, { redeemed: false }, { 'Idempotency-Key': 'export-1' });
    expect(other.status).toBe(409);
  });

  it('422 naming the field for any other value or key; no body is {}; another account sees 404 for the generator and for the export', async () => {
    const generator = await createGenerator();
    for (const [body, field] of [
      [{ redeemed: 'true' }, 'redeemed'],
      [{ redeemed: null }, 'redeemed'],
      [{ redeemed: 1 }, 'redeemed'],
      [{ all: true }, 'all'],
    ] as const) {
      const refused = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${generator}/exports`, { token: ctx.account.token, body });
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.json.errors[0].field, JSON.stringify(refused.json)).toBe(field);
    }
    const noBody = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${generator}/exports`, { token: ctx.account.token });
    expect(noBody.status, noBody.text).toBe(202);
    // A body that is not JSON is not "no body", even when String.prototype.trim() would empty it
    // (found by test/attack/codes/bulk-fuzz.test.ts: a lone no-break space was answered 202).
    for (const body of ['\ufeff', '\u00a0', ' \u2028 ']) {
      const refused = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${generator}/exports`, { token: ctx.account.token, body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.json.errors[0].message).toMatch(/not valid JSON/);
    }
    expect((await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${generator}/exports`, { token: ctx.account.token, body: ' \r\n\t' })).status).toBe(202);
    // The two accepted, and nothing of the refused ones.
    const { Items } = await documents.send(
      new QueryCommand({
        TableName: tableName('exports'),
        KeyConditionExpression: 'account_id = :a',
        ExpressionAttributeValues: { ':a': ctx.account.accountId },
      }),
    );
    expect(Items).toHaveLength(2);

    const stranger = await newAccount();
    const theirs = await createExport(generator, {}, {}, stranger.token);
    expect(theirs.status).toBe(404);
    const foreignRead = await getExport(noBody.json.export.id, stranger.token);
    expect(foreignRead.status).toBe(404);
    expect((await getExport(987_654_321)).status).toBe(404);
  });

  it('the common refusals: 400 for a path id that is not a positive integer, 401 without a token, 413 over 16 KiB, 415 for a body that is not JSON', async () => {
    const generator = await createGenerator();
    const post = (path: string, options: Parameters<typeof call>[4]) => call(ctx.api, 'core', 'POST', path, options);
    expect((await post('/v1.0/codegen/abc/exports', { token: ctx.account.token, body: {} })).status).toBe(400);
    expect((await post(`/v1.0/codegen/${generator}/exports`, { body: {} })).status).toBe(401);
    expect((await post(`/v1.0/codegen/${generator}/exports`, { token: ctx.account.token, body: { redeemed: true, pad: 'x'.repeat(17_000) } })).status).toBe(
      413,
    );
    const notJson = await post(`/v1.0/codegen/${generator}/exports`, {
      token: ctx.account.token,
      body: 'redeemed=true',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(notJson.status).toBe(415);
    expect((await call(ctx.api, 'core', 'GET', '/v1.0/exports/0', { token: ctx.account.token })).status).toBe(400);
    expect((await call(ctx.api, 'core', 'GET', '/v1.0/exports/1')).status).toBe(401);
  });
});
