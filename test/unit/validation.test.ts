import { describe, expect, it } from 'vitest';
import { HttpError } from '../../functions/commons/errors.ts';
import { checkBody, checkParameters } from '../../functions/commons/validation.ts';
import { validators } from '../../functions/commons/schemas/all.generated.ts';
import { GENERATED_DIR, generatedValidators } from '../../scripts/validators-source.ts';
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
  it('are up to date with functions/commons/schemas.ts (run `npm run schemas`)', () => {
    const expected = generatedValidators();
    const committed = readdirSync(GENERATED_DIR).filter((file) => file.endsWith('.generated.ts'));
    expect(committed.sort()).toEqual(Object.keys(expected).sort());
    for (const [file, source] of Object.entries(expected)) {
      expect(readFileSync(`${GENERATED_DIR}/${file}`, 'utf8') === source, `${file} is stale`).toBe(true);
    }
  });
});

describe('RFC 3339 date-times (transaction.occurred_at)', () => {
  it.each(['2026-11-21T14:03:00Z', '2026-11-21t14:03:00z', '2026-11-21T14:03:00.123456+05:30', '2024-12-31T23:59:60Z'])(
    'accepts %s',
    (text) => expect(voidWith({ occurred_at: text })()).toMatchObject({ occurred_at: text }),
  );
  it.each([
    '2026-11-21', '2026-11-21T14:03Z', '2026-11-21T14:03:00', '2026-11-21 14:03:00Z', '2026-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z', '2026-11-21T24:00:00Z', '2026-11-21T14:60:00Z', '2026-11-21T14:03:00+24:00', ' 2026-11-21T14:03:00Z',
    '2026-11-21T14:03:00+0100',
  ])('rejects %s', (text) =>
    expect(failure(voidWith({ occurred_at: text }))).toEqual({
      status: 422,
      problems: [{ message: 'transaction.occurred_at must be an RFC 3339 date-time such as 2026-11-21T14:03:00Z', field: 'transaction.occurred_at' }],
    }),
  );
});

describe('calendar dates (transaction.business_date)', () => {
  it.each(['2026-11-21', '2024-02-29', '2026-12-31'])('accepts %s', (text) =>
    expect(voidWith({ business_date: text })()).toMatchObject({ business_date: text }),
  );
  it.each(['2026-02-29', '2026-04-31', '2026-00-10', '2026-1-1', '26-11-21', '2026-11-21T00:00:00Z'])('rejects %s', (text) =>
    expect(failure(voidWith({ business_date: text })).problems).toEqual([
      { message: 'transaction.business_date must be a date of the form YYYY-MM-DD', field: 'transaction.business_date' },
    ]),
  );
});

describe('checkBody', () => {
  it('fills in the defaults', () => {
    expect(checkBody(validators.codeGeneratorCreate, { generation_type: 'numeric', code_length: 6, store_id: 3 }, 'code_generator')).toEqual({
      generation_type: 'numeric',
      code_length: 6,
      store_id: 3,
      buffer_type: 'default',
      description: '',
      prefix: '',
      status: 'active',
    });
  });

  it('counts characters, not UTF-16 units', () => {
    expect(voidWith({ receipt_id: '😀'.repeat(128) })()).toMatchObject({ receipt_id: '😀'.repeat(128) });
    expect(failure(voidWith({ receipt_id: '😀'.repeat(129) })).problems).toEqual([
      { message: 'transaction.receipt_id must be at most 128 characters', field: 'transaction.receipt_id' },
    ]);
  });

  it('reports one problem per field: keys that must not be sent first, in their order, then fields in the schema order', () => {
    const body = { code_length: 3, id: 1, colour: 'red', status: 7, prefix: 'lower', description: 'x'.repeat(256) };
    expect(failure(() => checkBody(validators.codeGeneratorCreate, body, 'code_generator'))).toEqual({
      status: 422,
      problems: [
        { message: 'code_generator.id is read-only and cannot be set', field: 'code_generator.id' },
        { message: 'code_generator.colour is not a known field', field: 'code_generator.colour' },
        { message: 'code_generator.generation_type is required', field: 'code_generator.generation_type' },
        { message: 'code_generator.code_length must be between 4 and 32', field: 'code_generator.code_length' },
        { message: 'code_generator.description must be at most 255 characters', field: 'code_generator.description' },
        { message: 'code_generator.prefix must be up to 16 of A-Z, 0-9 and -', field: 'code_generator.prefix' },
        { message: 'code_generator.store_id is required', field: 'code_generator.store_id' },
        { message: 'code_generator.status must be one of "active", "inactive"', field: 'code_generator.status' },
      ],
    });
  });

  it('is strict about types: "8" is not an integer, 8.5 neither', () => {
    const body = { generation_type: 'numeric', code_length: '8', store_id: 8.5 };
    expect(failure(() => checkBody(validators.codeGeneratorCreate, body, 'code_generator')).problems).toEqual([
      { message: 'code_generator.code_length must be an integer', field: 'code_generator.code_length' },
      { message: 'code_generator.store_id must be an integer', field: 'code_generator.store_id' },
    ]);
  });

  it('names the fields a PATCH cannot change', () => {
    expect(failure(() => checkBody(validators.codeGeneratorPatch, { prefix: 'A', status: 'paused' }, 'code_generator')).problems).toEqual([
      { message: 'code_generator.prefix cannot be changed; only status and description can', field: 'code_generator.prefix' },
      { message: 'code_generator.status must be one of "active", "inactive"', field: 'code_generator.status' },
    ]);
  });

  it('does not take fields from the prototype chain', () => {
    const sneaky = JSON.parse('{"__proto__":{"count":5}}');
    expect(failure(() => checkBody(validators.codesIssue, sneaky, '')).problems).toContainEqual({ message: 'count is required', field: 'count' });
  });
});

describe('checkParameters', () => {
  it('converts positive integers to numbers', () => {
    expect(checkParameters(validators.idPath, { id: '42' }, 'path')).toEqual({ id: 42 });
    expect(checkParameters(validators.codeGeneratorListQuery, { limit: '1000', store_id: '7' }, 'query')).toEqual({ limit: '1000', store_id: 7 });
  });

  it.each(['0', '01', '-1', '1.5', '1e3', '9007199254740992', ' 1', 'abc'])('answers 400 naming the parameter for id "%s"', (id) => {
    expect(failure(() => checkParameters(validators.idPath, { id }, 'path'))).toEqual({
      status: 400,
      problems: [{ message: 'id must be a positive integer', field: 'id' }],
    });
  });

  it('refuses unknown query parameters and limits out of range', () => {
    expect(failure(() => checkParameters(validators.listQuery, { limit: '1001', limt: '5' }, 'query')).problems).toEqual([
      { message: 'limt is not a known query parameter', field: 'limt' },
      { message: 'limit must be an integer from 1 to 1000', field: 'limit' },
    ]);
  });
});
