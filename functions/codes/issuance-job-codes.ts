import { createHmac } from 'node:crypto';
import { codeFromBytes, type CodeSettings } from './code-shapes.ts';

/**
 * The candidate codes of an issuance job's slots, derived, not drawn: the `attempt`-th candidate
 * of slot `slot` is read from HMAC-SHA256(job secret, `slot:attempt:block`) as randomCode reads
 * random bytes (code-shapes.ts: no bias). A copy of a chunk that runs again (its message handed
 * back after a crash, or delivered twice) derives the same candidates in the same order, so it
 * finds the codes an earlier copy wrote (they name the job and the slot) instead of writing
 * others: a job never writes a code twice, nor two codes for one slot. Unpredictable without the
 * job's secret (256 random bits, kept with the job, never shown).
 */
export function jobCandidate(secret: Buffer, settings: CodeSettings, slot: number, attempt: number): string {
  return codeFromBytes(settings, (block) => createHmac('sha256', secret).update(`${slot}:${attempt}:${block}`).digest());
}
