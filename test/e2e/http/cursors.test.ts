import { describe, expect, it } from 'vitest';
import { newAccount } from '../../support/accounts.ts';
import { winterPromotion } from '../../support/fixtures.ts';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';

/**
 * List cursors are encrypted and authenticated (functions/http/pagination.ts, PRODUCT.md "Lists
 * and pagination"): the bytes of a cursor hold no code, id or filter in plain text, a changed
 * cursor and another account's cursor answer 400 naming `cursor`. Before, a cursor of the codes
 * list was base64url of `{"v":1,"a":…,"f":"codes?generator=…","after":"<the last code>"}`: the
 * first test would have found the code in it.
 */
const ctx = useLocalApi();

async function generatorWithCodes(token: string, count: number) {
  const created = await call(ctx.api, 'core', 'POST', '/v1.0/codegen', { token, body: { code_generator: winterPromotion } });
  expect(created.status, created.text).toBe(201);
  const id = created.json.code_generator.id as number;
  const issued = await call(ctx.api, 'core', 'POST', `/v1.0/codegen/${id}/codes`, { token, body: { count } });
  expect(issued.status, issued.text).toBe(201);
  return { id, codes: issued.json.codes as string[] };
}

const refusedAsChanged = { errors: [{ message: 'cursor is malformed: pass the next_cursor of the previous page as it is', field: 'cursor' }] };

describe('list cursors', () => {
  it('show no code, id or filter in their bytes, and are short', async () => {
    const { token, accountId } = ctx.account;
    const { id, codes } = await generatorWithCodes(token, 3);
    const page = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes?limit=1&redeemed=false`, { token });
    expect(page.status, page.text).toBe(200);
    const cursor = page.json.next_cursor as string;
    const lastCode = page.json.codes[0].code as string;
    expect(codes).toContain(lastCode);
    const bytes = Buffer.from(cursor, 'base64url');
    for (const text of [bytes.toString('latin1'), bytes.toString('utf8'), cursor]) {
      for (const secret of [lastCode, lastCode.toLowerCase(), `generator=${id}`, 'redeemed', 'codes', `[${accountId},`, '"after"', '"f"'])
        expect(text.includes(secret), `${secret} in the cursor`).toBe(false);
    }
    // Base64 of the code, at each of its three alignments, is not in the cursor either.
    for (let shift = 0; shift < 3; shift++)
      expect(cursor).not.toContain(
        Buffer.from(`${'x'.repeat(shift)}${lastCode}`)
          .toString('base64url')
          .slice(4, -4),
      );
    expect(cursor.length).toBeLessThan(200);

    const events = await call(ctx.api, 'core', 'GET', '/v1.0/events?limit=1', { token });
    const eventCursor = events.json.next_cursor as string;
    const eventBytes = Buffer.from(eventCursor, 'base64url').toString('latin1');
    expect(eventBytes).not.toContain('events');
    expect(eventBytes).not.toContain(`,${events.json.events[0].id}]`);
    // The next page still follows, after the code of the first.
    const next = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes?limit=1&redeemed=false&cursor=${cursor}`, { token });
    expect(next.status, next.text).toBe(200);
    expect(next.json.codes[0].code > lastCode).toBe(true);
  });

  it('answer 400 naming cursor when any bit of them is flipped', async () => {
    const { token } = ctx.account;
    const { id } = await generatorWithCodes(token, 3);
    const cursor = (await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes?limit=1`, { token })).json.next_cursor as string;
    const bytes = Buffer.from(cursor, 'base64url');
    // The version byte, the nonce, the ciphertext and the tag: a bit of each, first and last.
    for (const position of [0, 1, 12, 13, Math.floor(bytes.length / 2), bytes.length - 17, bytes.length - 1]) {
      for (const bit of [0, 7]) {
        const changed = Buffer.from(bytes);
        changed[position]! ^= 1 << bit;
        const answer = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes?limit=1&cursor=${changed.toString('base64url')}`, { token });
        expect(answer.status, `byte ${position} bit ${bit}`).toBe(400);
        expect(answer.json).toEqual(refusedAsChanged);
      }
    }
    for (const changed of [cursor.slice(0, -1), `${cursor}A`, cursor.slice(1), `${cursor.slice(0, 20)}${cursor.slice(21)}`]) {
      const answer = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${id}/codes?limit=1&cursor=${changed}`, { token });
      expect(answer.status).toBe(400);
      expect(answer.json.errors[0].field).toBe('cursor');
    }
  });

  it("answer 400 naming cursor on another account's list, and on other filters", async () => {
    const mine = await generatorWithCodes(ctx.account.token, 3);
    const cursor = (await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${mine.id}/codes?limit=1`, { token: ctx.account.token })).json.next_cursor as string;
    const other = await newAccount();
    const theirs = await generatorWithCodes(other.token, 3);
    const foreign = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${theirs.id}/codes?limit=1&cursor=${cursor}`, { token: other.token });
    expect(foreign.status).toBe(400);
    expect(foreign.json).toEqual({ errors: [{ message: 'cursor belongs to another account or to other filters', field: 'cursor' }] });
    const otherFilter = await call(ctx.api, 'core', 'GET', `/v1.0/codegen/${mine.id}/codes?limit=1&redeemed=true&cursor=${cursor}`, {
      token: ctx.account.token,
    });
    expect(otherFilter.status).toBe(400);
    expect(otherFilter.json.errors[0].field).toBe('cursor');
  });
});
