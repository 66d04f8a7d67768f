import { resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { newAccount } from './accounts.ts';
import { bundledHandlers, sourceHandlers, startLocalApi, type HandlerLoader, type LocalApi } from '../../local/server.ts';

/**
 * The local server on free ports, serving either the TypeScript sources or, with
 * TILLGATE_HANDLERS=bundles, the bundles `cdk synth` built into cdk.out.
 */
export async function startTestApi(): Promise<LocalApi> {
  return startLocalApi({ ports: { core: 0, pos: 0 }, loadHandler: await handlerLoader(), log: () => undefined });
}

async function handlerLoader(): Promise<HandlerLoader> {
  if (process.env.TILLGATE_HANDLERS !== 'bundles') return sourceHandlers;
  const { findBundles } = await import('../../infra/bundles.ts');
  return bundledHandlers(findBundles(resolve('cdk.out')));
}

/**
 * Registers a test file's hooks: one local API for the file, and a fresh account before each
 * test, so tests never see each other's records. Read `api` and `account` inside tests.
 */
export function useLocalApi() {
  const context = {} as { api: LocalApi; account: Awaited<ReturnType<typeof newAccount>> };
  beforeAll(async () => {
    context.api = await startTestApi();
  });
  afterAll(() => context.api.close());
  beforeEach(async () => {
    context.account = await newAccount();
  });
  return context;
}
