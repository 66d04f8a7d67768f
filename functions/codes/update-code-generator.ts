import { api } from '#http/chain';
import { ok } from '#http/reply';
import { notFound, preconditionFailed, serviceUnavailable } from '#http/errors';
import { findCodeGenerator, updateCodeGenerator, type CodeGenerator } from '#data/code-generators';
import { newEvent, putEvent } from '#data/events';
import { freshIdCollided, nextId } from '#data/ids';
import { writeTogether } from '#data/transactions';
import { etagMatches, ifMatchOf, weakEtag } from '#http/etags';
import { presentCodeGenerator } from './presenters.ts';
import type { CodeGeneratorPatch } from '#http/schemas';
import codeGeneratorPatch from '#http/schemas/codeGeneratorPatch.generated';
import idPath from '#http/schemas/idPath.generated';

const ATTEMPTS = 3;

/**
 * Only status and description change (the schema answers 422 for any other field, before
 * anything is read). The generator is read, If-Match compared with its current ETag, and the
 * change and its `code_generator.updated` event written in one transaction conditioned on the
 * generator being as read; a concurrent change makes it read again. No change, no write.
 */
export const handler = api<Pick<CodeGeneratorPatch, 'status' | 'description'>, { id: number }>({
  host: 'core',
  operationId: 'updateCodeGenerator',
  params: idPath,
  body: codeGeneratorPatch,
}).handler(async (event, context) => {
  const { id } = event.params;
  const ifMatch = ifMatchOf(event.headers);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await findCodeGenerator(context.accountId, id);
    if (!current) throw notFound(`Code generator ${id} not found`);
    const currentBody = { code_generator: presentCodeGenerator(current) };
    if (ifMatch !== undefined && !etagMatches(ifMatch, weakEtag(JSON.stringify(currentBody)))) {
      throw preconditionFailed('If-Match does not match the current ETag of this code generator');
    }
    const changed = (['status', 'description'] as const).filter((key) => event.body[key] !== undefined && event.body[key] !== current[key]);
    if (changed.length === 0) return ok(currentBody);

    const now = new Date(Math.max(Date.now(), Date.parse(current.updated_at) + 1));
    const next: CodeGenerator = { ...current, ...event.body, updated_at: now.toISOString() };
    const eventRecord = newEvent(await nextId(), context.accountId, 'code_generator.updated', String(id), now);
    const result = await writeTogether([updateCodeGenerator(current, next), putEvent(eventRecord)]);
    if (result.outcome === 'written') return ok({ code_generator: presentCodeGenerator(next) });
    if (result.failed.has(1)) freshIdCollided('events', eventRecord.id);
  }
  throw serviceUnavailable();
});
