import { api } from '#http/chain';
import { codeSpace, randomCode, type CodeSettings } from './code-shapes.ts';
import { conflict, serviceUnavailable } from '#http/errors';
import { generatorIsActive } from '#data/code-generators';
import { finaliseCode, forgetPendingCodes, newCodeItem, putCode, putIssuance, takenCodes } from '#data/codes';
import { codeQuotaRoom, quotaRefusal, takeFromCodeQuota } from '#data/code-quota';
import { overQuota } from './code-quota.ts';
import { activeCodeSettings } from './generator-settings.ts';
import { issuancePlan } from './issuance-plan.ts';
import { allOrFirstError } from './side-by-side.ts';
import { logger } from '#runtime/observability';
import { scheduleFinalisationCheck } from './issuance-finalisation.ts';
import { newEvent, putEvent } from '#data/events';
import { findStoredResponse, newStoredResponse, putStoredResponse } from '#data/idempotency-keys';
import { freshIdCollided, nextId } from '#data/ids';
import { pause, writeTogether, type TransactItem } from '#data/transactions';
import { idempotencyScope, replay, storedResponseAfterConflict, type IdempotencyScope } from '#http/idempotency';
import codesIssue from '#http/schemas/codesIssue.generated';
import idPath from '#http/schemas/idPath.generated';

/**
 * Rounds of one batch before it gives up, whatever the cause: bounded work. A round fails as a
 * whole when any of its codes is taken, so under concurrent issuance a batch can lose a few
 * rounds to codes that other calls took since its last try: that is contention, and it does not
 * count as the space being full.
 */
const ROUNDS = 20;
/**
 * The space counts as too full when at least this share of the freshly drawn candidates (each
 * tried for the first time) were found taken, once enough were drawn to tell: an estimate of the
 * account's fill for this shape of code, which contention does not move.
 */
const FULL_SHARE = 0.9;
const FULL_SAMPLE = 100;
/** Local draws for one fresh candidate before the space counts as too full. */
const DRAWS = 64;
/** DynamoDB's limit of keys in one BatchGetItem. */
const READ_KEYS = 100;

const exhausted = () => conflict('This code generator is too close to exhausting its codes to issue that many; issue fewer, or use a longer code_length');

export const handler = api<{ count: number }, { id: number }>({
  host: 'core',
  operationId: 'issueCodes',
  params: idPath,
  body: codesIssue,
}).handler(async (event, context) => {
  const { id } = event.params;
  const { count } = event.body;
  const scope = idempotencyScope(event.headers, context.accountId, 'issueCodes', { id, count });
  const settings = await activeCodeSettings(context.accountId, id, 'issue codes');
  if (count > codeSpace(settings)) throw exhausted();

  const { batches, batchSize, lastSize } = issuancePlan(count, scope !== undefined);
  const single = batches === 0;
  if (scope && !single) {
    // A repeat would waste many transactions (and codes) before its key's condition failed.
    const earlier = await findStoredResponse(scope, new Date());
    if (earlier) return replay(earlier, scope);
  }
  // An issuance that cannot fit in the account's quota writes nothing (its completing
  // transaction checks the quota again, exactly, against racing issuances); a repeat of one that
  // was answered still gets its first answer.
  const overflow = await codeQuotaRoom(context.accountId, count);
  if (overflow) {
    const earlier = scope && single ? await findStoredResponse(scope, new Date()) : undefined;
    if (earlier && scope) return replay(earlier, scope);
    throw overQuota(count, overflow);
  }

  const issuance = new Issuance(context.accountId, id, settings, await nextId(), new Date().toISOString());
  // Before anything is written: whatever stops this request after its issuance is complete, the
  // finaliseIssuances worker finalises what it left pending. A queue that refuses the message
  // answers 503 with nothing written.
  if (!single) await scheduleCheck(context.accountId, id, issuance.id, context.getRemainingTimeInMillis?.());
  const codes = issuance.draw(count);
  // The pending batches (issuance-plan.ts) are independent of each other: written side by side,
  // then finalised side by side once the issuance is complete.
  const pendingBatches = Array.from({ length: batches }, (_, i) => codes.slice(i * batchSize, (i + 1) * batchSize));
  await allOrFirstError(pendingBatches, SIDE_BY_SIDE, (batch) => issuance.commit(batch, true, () => []));
  const eventRecord = newEvent(await nextId(), context.accountId, 'codes.issued', String(id), new Date(issuance.issuedAt));
  let body = '';
  // Built anew for each try of the last batch: a code replaced there changes the response stored.
  const completion = () => {
    body = JSON.stringify({ codes: issuance.written(codes), code_generator_id: id, issued_at: issuance.issuedAt });
    const stored = scope && newStoredResponse(scope, scope.requestHash, { statusCode: 201, body }, new Date(issuance.issuedAt));
    return [
      generatorIsActive(context.accountId, id),
      putEvent(eventRecord),
      takeFromCodeQuota(context.accountId, count),
      ...(single ? [] : [putIssuance(context.accountId, id, issuance.id, issuance.issuedAt, count, issuance.written(pendingBatches.flat()))]),
      ...(stored ? [putStoredResponse(stored)] : []),
    ];
  };
  const refused = await issuance.commit(codes.slice(count - lastSize), false, completion, { scope, eventId: eventRecord.id, count });
  if (refused) return refused;
  await issuance.finalise(pendingBatches);
  return { statusCode: 201, rawJson: body };
});

async function scheduleCheck(accountId: number, generatorId: number, issuanceId: number, remainingMs: number | undefined): Promise<void> {
  try {
    await scheduleFinalisationCheck({ accountId, generatorId, issuanceId }, remainingMs);
  } catch (error) {
    logger.error('the issuance was not begun: its finalisation check could not be queued', {
      error_code: 'issuance_check_not_queued',
      code_generator_id: generatorId,
      issuance_id: issuanceId,
      error: error as Error,
    });
    throw serviceUnavailable();
  }
}

/** Transactions of one call in flight at once: side by side, without flooding the table's partitions. */
const SIDE_BY_SIDE = 4;

/** One call's codes: drawn unique within the call, written batch by batch, replaced when taken. */
class Issuance {
  private readonly drawn = new Set<string>();
  private readonly replaced = new Map<string, string>();
  /** Codes tried once already (free then, unless they failed): a later failure of one is contention. */
  private readonly tried = new Set<string>();
  private freshTried = 0;
  private freshTaken = 0;

  constructor(
    readonly accountId: number,
    readonly generatorId: number,
    readonly settings: CodeSettings,
    readonly id: number,
    readonly issuedAt: string,
  ) {}

  draw(count: number): string[] {
    return Array.from({ length: count }, () => this.fresh());
  }

  /** The codes as written: the drawn ones with any replacements applied. */
  written(drawn: string[]): string[] {
    return drawn.map((code) => this.latest(code));
  }

  private latest(code: string): string {
    let current = code;
    while (this.replaced.has(current)) current = this.replaced.get(current)!;
    return current;
  }

  private fresh(): string {
    for (let draw = 0; draw < DRAWS; draw++) {
      const code = randomCode(this.settings);
      if (!this.drawn.has(code)) {
        this.drawn.add(code);
        return code;
      }
    }
    throw exhausted();
  }

  /**
   * Writes one batch of codes (and, for the last, the items that complete the issuance) in one
   * transaction. Codes found taken are replaced and the batch tried again, a bounded number of
   * times. Returns a Reply when the issuance ends otherwise (a replayed Idempotency-Key).
   */
  async commit(batch: string[], pending: boolean, completion: () => TransactItem[], last: { scope?: IdempotencyScope; eventId?: number; count?: number } = {}) {
    let codes = batch.map((code) => this.latest(code));
    for (let round = 0; round < ROUNDS; round++) {
      const tail = completion();
      const result = await writeTogether([
        ...codes.map((code) => putCode(newCodeItem(this.accountId, this.generatorId, code, this.issuedAt, this.id, pending))),
        ...tail,
      ]);
      if (result.outcome === 'written') return undefined;
      const failedTail = new Set([...result.failed.keys()].filter((index) => index >= codes.length).map((index) => index - codes.length));
      // The last batch's tail: [status check, event, quota, (issuance record), (stored response)].
      if (failedTail.has(0)) {
        // The generator exists (its settings were read), so it failed for being inactive.
        throw conflict(`Code generator ${this.generatorId} is inactive; activate it to issue codes`);
      }
      if (last.scope && failedTail.has(tail.length - 1)) {
        const earlier = await storedResponseAfterConflict(result.failed.get(codes.length + tail.length - 1), last.scope);
        if (earlier) return replay(earlier, last.scope);
      }
      if (failedTail.has(1) && last.eventId !== undefined) {
        freshIdCollided('events', last.eventId);
        throw serviceUnavailable();
      }
      // A racing issuance of the account took the room: nothing of this one is issued (its pending
      // codes, if any, never read as issued without the issuance record).
      if (failedTail.has(2) && last.count !== undefined) throw overQuota(last.count, quotaRefusal(result.failed.get(codes.length + 2)));
      // Codes found taken: replacements checked free by a read first (reads are cheaper than
      // failed transactions), then the batch again.
      let contended = 0;
      const failed: string[] = [];
      codes.forEach((code, index) => {
        const firstTry = !this.tried.has(code);
        this.tried.add(code);
        if (firstTry) this.freshTried++;
        if (!result.failed.has(index)) return;
        if (firstTry) this.freshTaken++;
        else contended++;
        failed.push(code);
      });
      this.judgeSpace();
      const replacements = await this.freeCandidates(failed.length);
      failed.forEach((code, i) => this.replaced.set(code, replacements[i]!));
      codes = codes.map((code) => this.latest(code));
      // Lost only to concurrent calls: step aside for a moment rather than meet them again at once.
      if (contended > 0) await pause(Math.min(round, 3));
    }
    throw exhausted();
  }

  /** 409 once the share of fresh candidates found taken says the space is too full. */
  private judgeSpace(): void {
    if (this.freshTried >= FULL_SAMPLE && this.freshTaken >= FULL_SHARE * this.freshTried) throw exhausted();
  }

  /**
   * `needed` new codes that a consistent read found free (a concurrent call may still take one
   * before the write: contention, met by the next round). Each read draws a few more candidates
   * than needed, so a nearly full space is recognised in a few reads; every candidate counts
   * towards the estimate of the space's fill.
   */
  private async freeCandidates(needed: number): Promise<string[]> {
    const free: string[] = [];
    while (free.length < needed) {
      const candidates = this.draw(Math.min(READ_KEYS, Math.max(2 * (needed - free.length), 16)));
      const taken = await takenCodes(this.accountId, candidates);
      for (const code of candidates) {
        this.tried.add(code);
        this.freshTried++;
        if (taken.has(code)) this.freshTaken++;
        else if (free.length < needed) free.push(code);
      }
      this.judgeSpace();
    }
    return free;
  }

  /**
   * The codes written pending, once the issuance is complete: ordinary issued codes, in the
   * generator's list; then the issuance record stops naming them. Already issued whatever happens
   * here (their issuance record exists, and every read honours it), so a failure (the deadline, a
   * fault, a code redeemed through its shards meanwhile) is logged and the call still succeeds:
   * the finaliseIssuances worker finalises them (its message was sent before the issuance began).
   */
  async finalise(pendingBatches: string[][]): Promise<void> {
    if (pendingBatches.length === 0) return;
    try {
      let left = 0;
      await allOrFirstError(pendingBatches, SIDE_BY_SIDE, async (batch) => {
        const result = await writeTogether(this.written(batch).map((code) => finaliseCode(this.accountId, this.generatorId, this.id, code)));
        if (result.outcome !== 'written') left += batch.length;
      });
      if (left > 0) throw new Error(`A batch of ${left} pending codes held a code redeemed through its shards meanwhile`);
      await forgetPendingCodes(this.accountId, this.generatorId, this.id, new Date());
    } catch (error) {
      logger.warn('issued codes not finalised: they are issued, but missing from the list until the finaliseIssuances worker finalises them', {
        error_code: 'issuance_not_finalised',
        code_generator_id: this.generatorId,
        issuance_id: this.id,
        codes: pendingBatches.flat().length,
        error: error as Error,
      });
    }
  }
}
