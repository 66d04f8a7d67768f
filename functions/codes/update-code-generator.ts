import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound, preconditionFailed, serviceUnavailable, validationFailed } from '#http/errors';
import {
  CHANGEABLE_FIELDS,
  findCodeGenerator,
  recordShardsVersion,
  updateCodeGenerator,
  type CodeGenerator,
  type CodeGeneratorChange,
} from '#data/code-generators';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { bringShardsTo, countBudget, openBudget } from '#data/promotion-shards';
import { writeTogether } from '#data/transactions';
import { entityTag, ifMatchHolds, ifMatchOf } from '#http/etags';
import { routeOf } from '#functions/routes';
import { presentCodeGenerator } from './presenters.ts';
import { inUtc, termRules, termsProblems } from './terms.ts';
import type { CodeGeneratorPatch } from '#http/schemas';
import codeGeneratorPatch from '#http/schemas/codeGeneratorPatch.generated';
import idPath from '#http/schemas/idPath.generated';

const ATTEMPTS = 3;
const { countInEtag } = routeOf('updateCodeGenerator');

/**
 * Status, description, the promotion's terms and its limits change (the schema answers 422 for
 * any other field, and the term rules for a body at odds with itself, before anything is read).
 * The generator is read, If-Match compared with its current ETag (without its count: a
 * `times_redeemed` that moved since the tag was read fails no PATCH, http/etags.ts), the terms
 * judged together with the stored ones (422), and the change, the next `terms_version` and the `code_generator.updated`
 * event written in one transaction conditioned on the generator being as read; a concurrent
 * change makes it read again. No change, no write.
 *
 * A change takes effect at once (PRODUCT.md), a limit's as a term's: before its 200, every shard
 * of the promotion (data/promotion-shards.ts) carries the new version, so a redemption that
 * judged by the old terms and limits and commits after the 200 fails its shard's condition.
 * Should that step fail, the answer is an error although the change is written; a PATCH that then
 * finds the shards behind (`shards_version` below `terms_version`), a repeat of the same body
 * included, finishes it.
 */
export const handler = api<Pick<CodeGeneratorPatch, keyof CodeGeneratorChange>, { id: number }>({
  host: 'core',
  operationId: 'updateCodeGenerator',
  params: idPath,
  body: codeGeneratorPatch,
  bodyRules: termRules,
}).handler(async (event, context) => {
  const { id } = event.params;
  const ifMatch = ifMatchOf(event.headers);
  const requested = inUtc(event.body);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await findCodeGenerator(context.accountId, id);
    if (!current) throw notFound(`Code generator ${id} not found`);
    const currentBody = { code_generator: presentCodeGenerator(current) };
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, entityTag(JSON.stringify(currentBody), countInEtag))) {
      throw preconditionFailed('If-Match does not match the current ETag of this code generator');
    }
    const problems = termsProblems({ ...current, ...requested });
    if (problems.length > 0)
      throw validationFailed(problems.map(({ key, message }) => ({ message: `code_generator.${key} ${message}`, field: `code_generator.${key}` })));

    const changed = CHANGEABLE_FIELDS.filter((key) => requested[key] !== undefined && !sameJson(requested[key], current[key]));
    if (changed.length === 0) {
      await reachShards(current, current.terms_version ?? 1);
      if (current.max_redemptions !== null) await countBudget(context.accountId, id, current.terms_version ?? 1);
      return ok(currentBody);
    }

    const now = new Date(Math.max(Date.now(), Date.parse(current.updated_at) + 1));
    const next: CodeGenerator = { ...current, ...requested, terms_version: (current.terms_version ?? 1) + 1, updated_at: now.toISOString() };
    const eventRecord = newEvent(await nextId(), context.accountId, 'code_generator.updated', String(id), now);
    // A budget where there was none: its pool, counted once the shards carry the new version.
    const opening = next.max_redemptions !== null && current.max_redemptions === null;
    const result = await writeTogether([
      updateCodeGenerator(current, next),
      putEvent(eventRecord),
      ...(opening ? [openBudget(context.accountId, id, next.terms_version!, false)] : []),
    ]);
    if (result.outcome === 'written') {
      await reachShards(current, next.terms_version!);
      if (next.max_redemptions !== null) await countBudget(context.accountId, id, next.terms_version!);
      return ok({ code_generator: presentCodeGenerator(next) });
    }
    if (result.failed.has(1)) freshIdCollided('events', eventRecord.id);
  }
  throw serviceUnavailable();
});

/**
 * Brings the promotion's shards to `version` and records that they carry it, unless the
 * generator as read already says they do.
 */
async function reachShards(generator: CodeGenerator, version: number): Promise<void> {
  if ((generator.shards_version ?? 1) >= version) return;
  await bringShardsTo(generator.account_id, generator.id, version);
  await recordShardsVersion(generator.account_id, generator.id, version);
}

/** JSON deep equality, the order of an object's keys aside (DynamoDB does not keep it; a list's order counts). */
function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
              .map(([key, inner]) => [key, canonical(inner)]),
          )
        : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
