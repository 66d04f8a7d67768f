import { describe, expect, it } from 'vitest';
import { hasTopLevelShape, isCalendarDate, isRfc3339DateTime, validateResource, type BodySchema } from '../../functions/commons/validation.ts';

describe('isRfc3339DateTime', () => {
  it.each(['2026-11-21T14:03:00Z', '2026-11-21t14:03:00z', '2026-11-21T14:03:00.123456+05:30', '2024-02-29T23:59:60-00:00'])(
    'accepts %s',
    (text) => expect(isRfc3339DateTime(text)).toBe(true),
  );
  it.each([
    '2026-11-21', '2026-11-21T14:03Z', '2026-11-21T14:03:00', '2026-11-21 14:03:00', '2026-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z', '2026-11-21T24:00:00Z', '2026-11-21T14:60:00Z', '2026-11-21T14:03:00+24:00', ' 2026-11-21T14:03:00Z',
  ])('rejects %s', (text) => expect(isRfc3339DateTime(text)).toBe(false));
});

describe('isCalendarDate', () => {
  it.each(['2026-11-21', '2024-02-29', '2026-12-31'])('accepts %s', (text) => expect(isCalendarDate(text)).toBe(true));
  it.each(['2026-02-29', '2026-04-31', '2026-00-10', '2026-1-1', '26-11-21', '2026-11-21T00:00:00Z'])('rejects %s', (text) =>
    expect(isCalendarDate(text)).toBe(false),
  );
});

describe('hasTopLevelShape', () => {
  it('wants an object holding an object under the root key', () => {
    expect(hasTopLevelShape({ thing: {} }, 'thing')).toBe(true);
    expect(hasTopLevelShape({ thing: [] }, 'thing')).toBe(false);
    expect(hasTopLevelShape({ thing: null }, 'thing')).toBe(false);
    expect(hasTopLevelShape([{ thing: {} }], 'thing')).toBe(false);
    expect(hasTopLevelShape(JSON.parse('{"__proto__":{"thing":{}}}'), 'thing')).toBe(false);
  });
});

describe('validateResource', () => {
  const schema: BodySchema = {
    root: 'thing',
    unknownKeys: 'reject',
    readOnly: ['id'],
    fields: {
      name: { type: 'string', required: true, minLength: 1, maxLength: 3 },
      size: { type: 'integer', minimum: 1, default: 5 },
    },
  };

  it('returns the known fields with defaults filled in', () => {
    expect(validateResource(schema, { name: 'abc' })).toEqual({ ok: true, value: { name: 'abc', size: 5 } });
  });

  it('counts characters, not UTF-16 units', () => {
    expect(validateResource(schema, { name: '😀😀😀' }).ok).toBe(true);
    expect(validateResource(schema, { name: '😀😀😀😀' }).ok).toBe(false);
  });

  it('reports every problem with its field', () => {
    expect(validateResource(schema, { name: 7, size: 0, id: 1, extra: true })).toEqual({
      ok: false,
      problems: [
        { message: 'thing.id is read-only and cannot be set', field: 'thing.id' },
        { message: 'thing.extra is not a known field', field: 'thing.extra' },
        { message: 'thing.name must be a string', field: 'thing.name' },
        { message: 'thing.size must be at least 1', field: 'thing.size' },
      ],
    });
  });

  it('does not take fields from the prototype chain', () => {
    const sneaky = JSON.parse('{"__proto__":{"name":"abc"}}');
    expect(validateResource(schema, sneaky)).toEqual({
      ok: false,
      problems: [
        { message: 'thing.__proto__ is not a known field', field: 'thing.__proto__' },
        { message: 'thing.name is required', field: 'thing.name' },
      ],
    });
  });

  it('treats null as absent only when the schema says so', () => {
    expect(validateResource(schema, { name: 'a', size: null }).ok).toBe(false);
    expect(validateResource({ ...schema, nullMeansAbsent: true }, { name: 'a', size: null })).toEqual({
      ok: true,
      value: { name: 'a', size: 5 },
    });
  });
});
