import { createHash } from 'node:crypto';
import type { Reply } from './reply.ts';
import { badRequest, conflict } from './errors.ts';
import { findStoredResponse, type StoredResponse } from '#data/idempotency-keys';
import { routeOf } from '#functions/routes';

/**
 * Idempotency-Key on the create routes: the first successful response is stored in the same
 * transaction as what it created, and a repeat with the same key and body gets it back, byte for
 * byte, without creating anything; the same key with another body is a 409.
 */
export interface IdempotencyScope {
  readonly accountId: number;
  readonly operationId: string;
  readonly key: string;
  /** SHA-256 of the request's values: key order and defaults do not make two requests differ. */
  readonly requestHash: string;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Every object's keys in one order, at every depth (a key list given to JSON.stringify would apply
 * at every depth too, and drop the keys of nested objects: a changed discount would hash alike).
 */
const sortedKeys = (_key: string, value: unknown) =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value;

export function idempotencyScope(headers: Record<string, string>, accountId: number, operationId: string, request: object): IdempotencyScope | undefined {
  // The row declares the header (the documents list it from there): a handler reading it without
  // that fails on its first request, whether or not a key came.
  if (!routeOf(operationId).idempotencyKey)
    throw new Error(`${operationId} reads Idempotency-Key, but its row in functions/routes.ts has no idempotencyKey: true`);
  const key = headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (!KEY.test(key)) throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters', 'Idempotency-Key');
  const requestHash = createHash('sha256').update(JSON.stringify(request, sortedKeys)).digest('hex');
  return { accountId, operationId, key, requestHash };
}

/** The stored answer to an earlier request with this key, or a 409 if that request differed. */
export function replay(stored: StoredResponse, scope: IdempotencyScope): Reply {
  if (stored.request_hash !== scope.requestHash) throw conflict('Idempotency-Key was already used with a different request body');
  return { statusCode: stored.status_code, rawJson: stored.body, location: stored.location, replayed: true };
}

/** The stored response a failed condition returned, or (where the database did not return it) a read. */
export async function storedResponseAfterConflict(returned: Record<string, any> | undefined, scope: IdempotencyScope): Promise<StoredResponse | undefined> {
  return (returned as StoredResponse | undefined) ?? findStoredResponse(scope, new Date());
}
