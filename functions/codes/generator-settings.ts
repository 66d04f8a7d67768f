import { findCodeGenerator, type CodeGenerator } from '#data/code-generators';

/**
 * A per-environment cache of code generators' settings. The shape of a generator's codes
 * (type, length, prefix) never changes, so an issuance may use an entry of any age; its status
 * and description can change, so a redemption takes an entry at most a minute old for the
 * description it shows, and the status it relies on is checked inside its transaction.
 */
export type GeneratorSettings = Pick<CodeGenerator, 'id' | 'generation_type' | 'code_length' | 'prefix' | 'description' | 'status'>;

interface Entry {
  readonly settings: GeneratorSettings;
  readonly readAt: number;
}

const MAX_ENTRIES = 1000;
const cache = new Map<string, Entry>();

/** The generator's settings no older than `maxAgeMs` (a read on a miss), or undefined when it does not exist. */
export async function generatorSettings(accountId: number, id: number, maxAgeMs: number): Promise<GeneratorSettings | undefined> {
  const key = `${accountId}#${id}`;
  const cached = cache.get(key);
  // Strictly younger: a maximum age of 0 always reads.
  if (cached && Date.now() - cached.readAt < maxAgeMs) return cached.settings;
  const generator = await findCodeGenerator(accountId, id);
  if (!generator) {
    cache.delete(key);
    return undefined;
  }
  return rememberGenerator(generator);
}

/**
 * Caches what a read found, or what a transaction's failed condition returned about a generator
 * (newer than the cache); answers the settings kept.
 */
export function rememberGenerator(generator: CodeGenerator): GeneratorSettings {
  const settings: GeneratorSettings = {
    id: generator.id,
    generation_type: generator.generation_type,
    code_length: generator.code_length,
    prefix: generator.prefix,
    description: generator.description,
    status: generator.status,
  };
  remember(generator.account_id, settings);
  return settings;
}

function remember(accountId: number, settings: GeneratorSettings): void {
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(`${accountId}#${settings.id}`, { settings, readAt: Date.now() });
}
