import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../functions/http/errors.ts';
import { checkBody, checkParameters } from '../../../functions/http/validation.ts';
import { validators } from '../../../functions/http/schemas/all.generated.ts';
import { GENERATED_DIR, generatedValidators } from '../../../scripts/validators-source.ts';
import { readdirSync, readFileSync } from 'node:fs';

/** The error an ajv-backed check throws, as the client will see it. */
function failure(check: () => unknown): { status: number; problems: readonly { message: string; field?: string }[] } {
  try {
    check();
  } catch (error) {
    if (error instanceof HttpError) return { status: error.statusCode, problems: error.problems };
    throw error;
  }
  throw new Error('expected the check to fail');
}

const voidWith = (fields: Record<string, unknown>) => () =>
  checkBody(validators.voidTransaction, { site_id: 's', pos_transaction_id: 't', ...fields }, 'transaction');

describe('the generated validators', () => {
  it('are up to date with functions/http/schemas.ts (run `npm run schemas`)', () => {
    const expected = generatedValidators();
    const committed = readdirSync(GENERATED_DIR).filter((file) => file.endsWith('.generated.ts'));
    expect(committed.sort()).toEqual(Object.keys(expected).sort());
    for (const [file, source] of Object.entries(expected)) {
      expect(readFileSync(`${GENERATED_DIR}/${file}`, 'utf8') === source, `${file} is stale`).toBe(true);
    }
  });
});

describe('RFC 3339 date-times (transaction.occurred_at)', () => {
  it.each(['2026-11-21T14:03:00Z', '2026-11-21t14:03:00z', '2026-11-21T14:03:00.123456+05:30', '2024-12-31T23:59:60Z'])('accepts %s', (text) =>
    expect(voidWith({ occurred_at: text })()).toMatchObject({ occurred_at: text }),
  );
  it.each(['2026-11-21', '2026-11-21T14:03Z', '2026-11-21T14:03:00', '2026-11-21 14:03:00Z', ' 2026-11-21T14:03:00Z', '2026-11-21T14:03:00+0100'])(
    'rejects %s, not of the form, with the form',
    (text) =>
      expect(failure(voidWith({ occurred_at: text }))).toEqual({
        status: 422,
        problems: [{ message: 'transaction.occurred_at must be an RFC 3339 date-time such as 2026-11-21T14:03:00Z', field: 'transaction.occurred_at' }],
      }),
  );
  it.each(['2026-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-11-21T24:00:00Z', '2026-11-21T14:60:00Z', '2026-11-21T14:03:00+24:00'])(
    'rejects %s, of the form but no real moment, saying that it does not exist',
    (text) =>
      expect(failure(voidWith({ occurred_at: text }))).toEqual({
        status: 422,
        problems: [
          {
            message: `transaction.occurred_at must be a date-time that exists: ${text} is not a real day and time of day (hours 00-23, minutes 00-59, offset at most ±23:59)`,
            field: 'transaction.occurred_at',
          },
        ],
      }),
  );
});

describe('calendar dates (transaction.business_date)', () => {
  it.each(['2026-11-21', '2024-02-29', '2026-12-31'])('accepts %s', (text) =>
    expect(voidWith({ business_date: text })()).toMatchObject({ business_date: text }),
  );
  it.each(['2026-1-1', '26-11-21', '2026-11-21T00:00:00Z'])('rejects %s, not of the form, with the form', (text) =>
    expect(failure(voidWith({ business_date: text })).problems).toEqual([
      { message: 'transaction.business_date must be a date of the form YYYY-MM-DD', field: 'transaction.business_date' },
    ]),
  );
  // PRODUCT.md: a date that does not exist is not "must be of the form YYYY-MM-DD".
  it.each(['2026-02-29', '2026-04-31', '2026-00-10', '2025-02-30'])('rejects %s, a day that does not exist, saying so', (text) =>
    expect(failure(voidWith({ business_date: text })).problems).toEqual([
      { message: `transaction.business_date must be a date that exists: ${text} is not a day of the calendar`, field: 'transaction.business_date' },
    ]),
  );
});

describe('integers past 2^53 - 1 (ids, store_id): the answer names the bound', () => {
  const bound = 'of at most 9007199254740991 (2^53 - 1)';

  it.each(['9007199254740992', '12345678901234567'])('path id %s: 400 naming the bound', (id) => {
    expect(failure(() => checkParameters(validators.idPath, { id }, 'path'))).toEqual({
      status: 400,
      problems: [{ message: `id must be a positive integer ${bound}`, field: 'id' }],
    });
  });

  it('query store_id 2^53: 400 naming the bound', () => {
    expect(failure(() => checkParameters(validators.codeGeneratorListQuery, { store_id: '9007199254740992' }, 'query')).problems).toEqual([
      { message: `store_id must be a positive integer ${bound}`, field: 'store_id' },
    ]);
  });

  it('body store_id 2^53: 422 naming the bound', () => {
    const body = { generation_type: 'tillgate', code_length: 8, store_id: 2 ** 53 };
    expect(failure(() => checkBody(validators.codeGeneratorCreate, body, 'code_generator'))).toEqual({
      status: 422,
      problems: [{ message: `code_generator.store_id must be an integer ${bound}`, field: 'code_generator.store_id' }],
    });
  });

  it('the largest safe id is accepted, as a number', () => {
    expect(checkParameters(validators.idPath, { id: '9007199254740991' }, 'path')).toEqual({ id: 9007199254740991 });
  });
});

describe('messages say what a field must be, in words', () => {
  const endpoint = (fields: Record<string, unknown>) => () =>
    checkBody(validators.webhookEndpointCreate, { url: 'https://hooks.example.com/', ...fields }, 'webhook_endpoint');

  it.each([
    [{ event_types: 'codes.issued' }, 'webhook_endpoint.event_types must be an array'],
    [{ event_types: [] }, 'webhook_endpoint.event_types must list at least one value'],
    [{ event_types: ['codes.issued', 'codes.issued'] }, 'webhook_endpoint.event_types must not list the same value twice'],
    [{ description: 7 }, 'webhook_endpoint.description must be a string'],
    [{ url: {} }, 'webhook_endpoint.url must be a string'],
  ])('%j: %s', (fields, message) => {
    expect(failure(endpoint(fields)).problems.map((p) => p.message)).toEqual([message]);
  });

  it('a body field of the wrong type names the type with its article', () => {
    const { problems } = failure(() => checkBody(validators.codesRedemption, { site_id: 's', pos_transaction_id: 't', codes: {} }, 'transaction'));
    expect(problems[0]!.message).not.toMatch(/must be a (array|object|integer)/);
  });
});
