import { sourceHandlers, startLocalApi } from '../../../local/server.ts';

/**
 * The local API in a process of its own, against whatever DYNAMODB_ENDPOINT and table names its
 * environment gives: the outage test stops and restarts that database under it. Prints the
 * hosts' URLs as one JSON line, then serves until killed.
 */
const api = await startLocalApi({ ports: { core: 0, pos: 0 }, loadHandler: sourceHandlers, log: () => undefined });
process.stdout.write(`${JSON.stringify(api.urls)}\n`);
process.on('SIGTERM', () => void api.close().then(() => process.exit(0)));
