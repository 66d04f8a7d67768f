import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { newAccount } from './accounts.ts';
import { bundledHandlers, sourceHandlers, startLocalApi, type HandlerLoader, type LocalApi } from '../../local/server.ts';

/**
 * Wraps a handler where the local stack invokes it, inside the invocation: a test that watches
 * invocations from outside the function (test/e2e/webhooks/log-context.test.ts).
 */
export type Around = <Event, Result>(handler: (event: Event, context: Context) => Promise<Result>) => (event: Event, context: Context) => Promise<Result>;

/**
 * The local server on free ports, serving either the TypeScript sources or, with
 * TILLGATE_HANDLERS=bundles, the bundles `cdk synth` built into cdk.out; each handler wrapped
 * by `around` when given.
 */
export async function startTestApi(around?: Around): Promise<LocalApi> {
  const load = await handlerLoader();
  const loadHandler: HandlerLoader = around ? async (route) => around(await load(route)) : load;
  return startLocalApi({ ports: { core: 0, pos: 0 }, loadHandler, log: () => undefined, lazy: true });
}

async function handlerLoader(): Promise<HandlerLoader> {
  if (process.env.TILLGATE_HANDLERS !== 'bundles') return sourceHandlers;
  return bundledHandlers((await import('./bundles.ts')).freshBundles());
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
  afterAll(() => context.api?.close());
  beforeEach(async () => {
    context.account = await newAccount();
  });
  return context;
}
