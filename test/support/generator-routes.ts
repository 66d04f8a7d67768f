import { expect } from 'vitest';
import { send, type CoreBody } from './client.ts';
import { winterPromotion } from './fixtures.ts';
import { call } from './http.ts';
import type { useLocalApi } from './local-api.ts';
import { codeGeneratorsOf, eventsOf, promotionShardsOf } from './records.ts';

export type GeneratorFields = CoreBody<'createCodeGenerator'>['code_generator'];
export type GeneratorChange = CoreBody<'updateCodeGenerator'>['code_generator'];

/**
 * The code generator routes as the e2e files of a generator's settings (terms, limits) call them,
 * for the file's account: typed through the client where a client would send the body, raw where
 * none would; and what a refused change must leave as it was.
 */
export function generatorRoutes(ctx: ReturnType<typeof useLocalApi>) {
  const create = (fields: Partial<GeneratorFields> = {}) =>
    send(ctx.api, ctx.account.token, ({ core }) => core.POST('/v1.0/codegen', { body: { code_generator: { ...winterPromotion, ...fields } } }));
  const stored = async (id: number) => (await codeGeneratorsOf(ctx.account.accountId)).find((generator) => generator.id === id)!;
  const eventTypes = async () => (await eventsOf(ctx.account.accountId)).map((event) => event.type).sort();
  return {
    create,
    created: async (fields: Partial<GeneratorFields> = {}) => {
      const response = await create(fields);
      expect(response.status, response.text).toBe(201);
      return response.json.code_generator;
    },
    /** A body no typed client would send: raw. */
    createRaw: (fields: Record<string, unknown>) =>
      call(ctx.api, 'core', 'POST', '/v1.0/codegen', { token: ctx.account.token, body: { code_generator: { ...winterPromotion, ...fields } } }),
    patch: (id: number, fields: GeneratorChange, headers: { 'If-Match'?: string } = {}) =>
      send(ctx.api, ctx.account.token, ({ core }) =>
        core.PATCH('/v1.0/codegen/{id}', { params: { path: { id }, header: headers }, body: { code_generator: fields } }),
      ),
    patchRaw: (id: number, fields: Record<string, unknown>) =>
      call(ctx.api, 'core', 'PATCH', `/v1.0/codegen/${id}`, { token: ctx.account.token, body: { code_generator: fields } }),
    get: (id: number) => send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen/{id}', { params: { path: { id } } })),
    list: (storeId?: number) =>
      send(ctx.api, ctx.account.token, ({ core }) => core.GET('/v1.0/codegen', { params: { query: storeId === undefined ? {} : { store_id: storeId } } })),
    /** The generator's item as stored. */
    stored,
    eventTypes,
    /** What a 422 must leave as it was: the generator's item, the events and the shards. */
    snapshot: async (id: number) => ({ item: await stored(id), events: await eventTypes(), shards: await promotionShardsOf(ctx.account.accountId, id) }),
  };
}
