import { createHash } from 'node:crypto';
import { api, created, type Reply } from '#commons/api';
import { badRequest, conflict } from '#commons/errors';
import { putCodeGenerator, type CodeGenerator } from '#commons/data/code-generators';
import { newEvent, putEvent } from '#commons/data/events';
import { findStoredResponse, newStoredResponse, putStoredResponse } from '#commons/data/idempotency-keys';
import { nextIds } from '#commons/data/ids';
import { readOrCreate, writeTogether } from '#commons/data/transactions';
import type { CodeGeneratorCreate } from '#commons/schemas';



type CodeGeneratorInput = Required<Omit<CodeGeneratorCreate, 'id' | 'account_id' | 'created_at' | 'updated_at'>>;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

export const handler = api<CodeGeneratorInput>({
  host: 'core',
  operationId: 'createCodeGenerator',
  body: { root: 'code_generator', schema: 'codeGeneratorCreate' },
})
  .handler(async (event, context) => {
    const input = event.body;
    const key = event.headers['idempotency-key'];
    if (key === undefined) return (await createCodeGenerator(context.accountId, input)).reply;

    if (!IDEMPOTENCY_KEY.test(key)) {
      throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters', 'Idempotency-Key');
    }
    // Key order and defaults do not make two requests different; the values do.
    const requestHash = createHash('sha256').update(JSON.stringify(input, Object.keys(input).sort())).digest('hex');
    const { value: stored, created: isNew } = await readOrCreate(
      () => findStoredResponse(context.accountId, key, new Date()),
      async () => {
        const now = new Date();
        const attempt = await createCodeGenerator(context.accountId, input, now, (reply) =>
          newStoredResponse(context.accountId, key, requestHash, reply, now),
        );
        return { outcome: attempt.outcome, value: attempt.stored! };
      },
    );
    if (stored.request_hash !== requestHash) {
      throw conflict('Idempotency-Key was already used with a different request body');
    }
    const reply: Reply = { statusCode: stored.status_code, rawJson: stored.body, location: stored.location };
    return isNew ? reply : { ...reply, replayed: true };
  });

/**
 * Writes the generator and its `code_generator.created` event (and, when asked, the stored
 * response of its Idempotency-Key) in one transaction: all three exist, or none does.
 */
async function createCodeGenerator(
  accountId: number,
  input: CodeGeneratorInput,
  now = new Date(),
  remember?: (reply: { statusCode: number; body: string; location: string }) => ReturnType<typeof newStoredResponse>,
) {
  const ids = await nextIds('code_generator', 'event');
  const timestamp = now.toISOString();
  const generator: CodeGenerator = {
    id: ids.code_generator,
    account_id: accountId,
    ...input,
    created_at: timestamp,
    updated_at: timestamp,
  };
  const reply = created(`/v1.0/codegen/${generator.id}`, { code_generator: presentCodeGenerator(generator) });
  const stored = remember?.({ statusCode: reply.statusCode, body: JSON.stringify(reply.body), location: reply.location! });
  const outcome = await writeTogether([
    putCodeGenerator(generator),
    putEvent(newEvent(ids.event, accountId, 'code_generator.created', String(generator.id), now)),
    ...(stored ? [putStoredResponse(stored)] : []),
  ]);
  if (outcome !== 'written' && !stored) {
    // Fresh ids cannot collide; without a key there is no race to lose, only a fault.
    throw Object.assign(new Error(`Code generator write ${outcome}`), { name: 'TransactionConflictException' });
  }
  return { reply, outcome, stored };
}

/** The eleven fields of the seed, in its order. */
export function presentCodeGenerator(generator: CodeGenerator) {
  return {
    generation_type: generator.generation_type,
    buffer_type: generator.buffer_type,
    code_length: generator.code_length,
    description: generator.description,
    prefix: generator.prefix,
    store_id: generator.store_id,
    status: generator.status,
    id: generator.id,
    account_id: generator.account_id,
    created_at: generator.created_at,
    updated_at: generator.updated_at,
  };
}
