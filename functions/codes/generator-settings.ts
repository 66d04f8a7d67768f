import { findCodeGenerator, findCodeGenerators, type CodeGenerator } from '#data/code-generators';
import { conflict, notFound } from '#http/errors';
import type { CodeSettings } from './code-shapes.ts';

/**
 * A per-environment cache of code generators' settings. The shape of a generator's codes
 * (type, length, prefix) never changes, so an issuance may use an entry of any age. Status,
 * description, terms and limits change together with `terms_version`: a redemption may judge by
 * an entry of any age, because its transaction proves on a promotion shard that the version it
 * judged by is still current (data/promotion-shards.ts), and reads the generator again when it
 * is not. An answer that refuses a code is judged by a fresh read. The limits come with their
 * defaults (data/code-generators.ts), also for a generator written before them.
 */
export type GeneratorSettings = Pick<
  CodeGenerator,
  | 'id'
  | 'generation_type'
  | 'code_length'
  | 'prefix'
  | 'description'
  | 'status'
  | 'discount'
  | 'minimum_basket'
  | 'valid_from'
  | 'valid_until'
  | 'site_ids'
  | 'max_redemptions_per_code'
  | 'max_redemptions'
  | 'max_redemptions_per_customer'
> & { readonly terms_version: number };

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

/** Caches what a read found; answers the settings kept. */
function rememberGenerator(generator: CodeGenerator): GeneratorSettings {
  const settings: GeneratorSettings = {
    id: generator.id,
    generation_type: generator.generation_type,
    code_length: generator.code_length,
    prefix: generator.prefix,
    description: generator.description,
    status: generator.status,
    discount: generator.discount,
    minimum_basket: generator.minimum_basket,
    valid_from: generator.valid_from,
    valid_until: generator.valid_until,
    site_ids: generator.site_ids,
    max_redemptions_per_code: generator.max_redemptions_per_code,
    max_redemptions: generator.max_redemptions,
    max_redemptions_per_customer: generator.max_redemptions_per_customer,
    terms_version: generator.terms_version ?? 1,
  };
  remember(generator.account_id, settings);
  return settings;
}

function remember(accountId: number, settings: GeneratorSettings): void {
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(`${accountId}#${settings.id}`, { settings, readAt: Date.now() });
}

/**
 * The settings of these generators, read afresh (one consistent BatchGetItem, which refreshes the
 * cache) or from the cache at any age (see the top of this module; a read on a miss).
 */
export async function settingsOf(accountId: number, ids: readonly number[], fresh: boolean): Promise<Map<number, GeneratorSettings | undefined>> {
  if (fresh) {
    const read = ids.length === 0 ? [] : await findCodeGenerators(accountId, ids);
    const settings = new Map<number, GeneratorSettings | undefined>(ids.map((id) => [id, undefined]));
    for (const generator of read) settings.set(generator.id, rememberGenerator(generator));
    for (const id of ids) if (!settings.get(id)) cache.delete(`${accountId}#${id}`);
    return settings;
  }
  const found = await Promise.all(ids.map((id) => generatorSettings(accountId, id, Number.POSITIVE_INFINITY)));
  return new Map(ids.map((id, index) => [id, found[index]]));
}

/**
 * The shape of an active generator's codes, for an issuance (a request or a job). The shape never
 * changes (only status, description and terms do), so each execution environment reads it once
 * per generator; an issuance's completing transaction checks the status again. An inactive
 * generator answers 409 at once, after a fresh read (it may have been activated since the cache
 * saw it); another account's, or none, 404.
 */
export async function activeCodeSettings(accountId: number, id: number, act: string): Promise<CodeSettings> {
  let settings = await generatorSettings(accountId, id, Number.POSITIVE_INFINITY);
  if (settings?.status === 'inactive') settings = await generatorSettings(accountId, id, 0);
  if (!settings) throw notFound(`Code generator ${id} not found`);
  if (settings.status !== 'active') throw conflict(`Code generator ${id} is inactive; activate it to ${act}`);
  return settings;
}
