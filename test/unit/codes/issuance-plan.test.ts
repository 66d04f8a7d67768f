import { describe, expect, it } from 'vitest';
import { issuancePlan } from '../../../functions/codes/issuance-plan.ts';

/** The split the handler writes and the bench counts its transactions and capacity by. */
describe('issuancePlan', () => {
  it('writes up to 97 codes in one transaction with the status check, the event and the quota (96 with an Idempotency-Key)', () => {
    expect(issuancePlan(97, false)).toEqual({ batches: 0, batchSize: 0, lastSize: 97 });
    expect(issuancePlan(96, true)).toEqual({ batches: 0, batchSize: 0, lastSize: 96 });
  });

  it('beyond that, writes equal pending batches of at most 100 first, and nearly a full transaction last (with the issuance record)', () => {
    expect(issuancePlan(98, false)).toEqual({ batches: 1, batchSize: 2, lastSize: 96 });
    expect(issuancePlan(97, true)).toEqual({ batches: 1, batchSize: 2, lastSize: 95 });
    expect(issuancePlan(1000, false)).toEqual({ batches: 10, batchSize: 91, lastSize: 90 });
    expect(issuancePlan(196, false)).toEqual({ batches: 1, batchSize: 100, lastSize: 96 });
    expect(issuancePlan(197, false)).toEqual({ batches: 2, batchSize: 51, lastSize: 95 });
  });
});
