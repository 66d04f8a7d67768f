import { afterAll, beforeAll, vi } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { captureLogs, type DynamoTransport } from './support.ts';

/**
 * The hooks of a log walk: a local API started after logging is turned up to DEBUG (and, with
 * `logEvent`, Powertools' whole-event logging on, as an operator debugging a stage might), every
 * line written to stdout, stderr, the console and the local gateway's log kept in `captured`,
 * and the DynamoDB client's transport to inject faults through. Read the fields inside tests.
 */
export function useLoggedApi(options: { logEvent?: boolean } = {}) {
  const logged = { captured: [] as string[] } as { captured: string[]; api: LocalApi; transport: DynamoTransport };
  const saved = { POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL, POWERTOOLS_LOGGER_LOG_EVENT: process.env.POWERTOOLS_LOGGER_LOG_EVENT };
  beforeAll(async () => {
    vi.resetModules();
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    if (options.logEvent) process.env.POWERTOOLS_LOGGER_LOG_EVENT = 'true';
    captureLogs(logged.captured);
    const { sourceHandlers, startLocalApi } = await import('../../local/server.ts');
    logged.api = await startLocalApi({ ports: { core: 0, pos: 0 }, loadHandler: sourceHandlers, log: (line) => void logged.captured.push(line) });
    const { dynamodb } = await import('../../functions/runtime/clients.ts');
    logged.transport = (dynamodb.config as unknown as { requestHandler: DynamoTransport }).requestHandler;
  });
  afterAll(async () => {
    await logged.api?.close();
    vi.restoreAllMocks();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  return logged;
}
