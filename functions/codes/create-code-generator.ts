import { api } from '#http/chain';
import { created } from '#http/reply';
import { serviceUnavailable } from '#http/errors';
import { putCodeGenerator, type CodeGenerator } from '#data/code-generators';
import { newEvent, putEvent } from '#data/events';
import { newStoredResponse, putStoredResponse } from '#data/idempotency-keys';
import { freshIdCollided, nextId } from '#data/ids';
import { writeTogether } from '#data/transactions';
import { openBudget } from '#data/promotion-shards';
import { idempotencyScope, replay, storedResponseAfterConflict } from '#http/idempotency';
import { presentCodeGenerator } from './presenters.ts';
import { inUtc, termRules } from './terms.ts';
import type { CodeGeneratorCreate } from '#http/schemas';
import codeGeneratorCreate from '#http/schemas/codeGeneratorCreate.generated';

type CodeGeneratorInput = Required<Omit<CodeGeneratorCreate, 'id' | 'account_id' | 'created_at' | 'updated_at'>>;

/**
 * One TransactWriteItems: the generator, its `code_generator.created` event and, with an
 * Idempotency-Key, the stored response. A repeated key fails that item's condition and the
 * stored response comes back with the failure, so a repeat costs the same single request.
 * The terms and limits are stored as answered: every one, defaults included, date-times in UTC.
 */
export const handler = api<CodeGeneratorInput>({
  host: 'core',
  operationId: 'createCodeGenerator',
  body: codeGeneratorCreate,
  bodyRules: termRules,
}).handler(async (event, context) => {
  const scope = idempotencyScope(event.headers, context.accountId, 'createCodeGenerator', event.body);
  for (let attempt = 0; attempt < 2; attempt++) {
    const now = new Date();
    const timestamp = now.toISOString();
    const generator: CodeGenerator = {
      ...inUtc(event.body),
      id: await nextId(),
      account_id: context.accountId,
      created_at: timestamp,
      updated_at: timestamp,
    };
    const location = `/v1.0/codegen/${generator.id}`;
    const body = JSON.stringify({ code_generator: presentCodeGenerator(generator) });
    const stored = scope && newStoredResponse(scope, scope.requestHash, { statusCode: 201, body, location }, now);
    const eventRecord = newEvent(await nextId(), context.accountId, 'code_generator.created', String(generator.id), now);

    const result = await writeTogether([
      putCodeGenerator(generator),
      putEvent(eventRecord),
      ...(stored ? [putStoredResponse(stored)] : []),
      // A budget's pool, ready at once: nothing is held yet (data/promotion-shards.ts).
      ...(generator.max_redemptions !== null && generator.max_redemptions !== undefined ? [openBudget(context.accountId, generator.id, 1, true)] : []),
    ]);
    if (result.outcome === 'written') return { ...created(location, undefined), rawJson: body };
    if (scope && result.failed.has(2)) {
      const earlier = await storedResponseAfterConflict(result.failed.get(2), scope);
      if (earlier) return replay(earlier, scope);
      continue; // the stored response expired in between: create anew
    }
    if (result.failed.has(0)) freshIdCollided('codeGenerators', generator.id);
    if (result.failed.has(1)) freshIdCollided('events', eventRecord.id);
  }
  throw serviceUnavailable();
});
