import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** A worker's handler as the stand-ins call it: the event its trigger hands over, a Lambda context. */
export type WorkerHandler = (event: unknown, context: Context) => Promise<unknown>;

/** The context a stand-in hands a worker: a fresh request id, and the function's timeout. */
export const lambdaContext = (name: string, timeoutSeconds = 30): Context => {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    awsRequestId: randomUUID(),
    functionName: `tillgate-local-${name}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  } as Context;
};

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
