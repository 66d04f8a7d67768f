import { findBundles } from '../../../infra/bundles.ts';
import { bundledHandlers, startLocalApi } from '../../../local/server.ts';
import { serveCpuUsage } from './cpu.ts';

/**
 * tillgate's local server (the API Gateway stand-in of `npm start`) with the handlers cdk synth
 * bundled, in a process of its own so its CPU time can be read apart. The environment (tables,
 * endpoint, production settings) comes from the bench runner.
 */
const api = await startLocalApi({ ports: { core: 0, pos: 0 }, loadHandler: bundledHandlers(findBundles('cdk.out')), log: () => undefined });
serveCpuUsage({ urls: api.urls });
