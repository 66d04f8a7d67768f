import { api } from '#http/chain';
import { created } from '#http/reply';
import { conflict, serviceUnavailable } from '#http/errors';
import { newStoredResponse, putStoredResponse } from '#data/idempotency-keys';
import { freshIdCollided, nextId } from '#data/ids';
import { pause, writeTogether, type WriteResult } from '#data/transactions';
import { countOneMore, MAX_ENDPOINTS_PER_ACCOUNT, putEndpoint, type WebhookEndpoint } from '#data/webhook-endpoints';
import { putSecret, sealSecret } from '#data/webhook-secrets';
import { idempotencyScope, replay, storedResponseAfterConflict } from '#http/idempotency';
import { presentWebhookEndpoint } from './presenters.ts';
import type { WebhookEndpointCreate } from '#http/schemas';
import webhookEndpointCreate from '#http/schemas/webhookEndpointCreate.generated';
import { endpointFieldRules } from './endpoint-fields.ts';
import { newSecret } from './rules.ts';

type EndpointInput = Required<Pick<WebhookEndpointCreate, 'url' | 'event_types' | 'description' | 'status'>>;

/** Concurrent creates of one account all change its count item: they conflict and are tried again. */
const ATTEMPTS = 10;

/**
 * One TransactWriteItems: the account's endpoint count (condition: below 10), the endpoint, its
 * secret (encrypted: data/webhook-secrets.ts; in the secrets table, which this function may write
 * but not read, with a key it may encrypt with but not decrypt with) and, with an
 * Idempotency-Key, the stored response. The stored response carries no secret: a replay answers
 * without one (a client that lost it rotates). Webhook endpoints write no events.
 */
export const handler = api<EndpointInput>({
  host: 'core',
  operationId: 'createWebhookEndpoint',
  body: webhookEndpointCreate,
  bodyRules: endpointFieldRules,
}).handler(async (event, context) => {
  const scope = idempotencyScope(event.headers, context.accountId, 'createWebhookEndpoint', event.body);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const now = new Date();
    const timestamp = now.toISOString();
    const endpoint: WebhookEndpoint = {
      account_id: context.accountId,
      id: await nextId(),
      url: event.body.url,
      event_types: event.body.event_types,
      description: event.body.description,
      status: event.body.status,
      created_at: timestamp,
      updated_at: timestamp,
      enabled_at: timestamp,
    };
    const secret = newSecret();
    const sealed = await sealSecret(context.accountId, endpoint.id, secret);
    const location = `/v1.0/webhook_endpoints/${endpoint.id}`;
    const stored =
      scope &&
      newStoredResponse(
        scope,
        scope.requestHash,
        { statusCode: 201, body: JSON.stringify({ webhook_endpoint: presentWebhookEndpoint(endpoint) }), location },
        now,
      );

    let result: WriteResult;
    try {
      result = await writeTogether([
        countOneMore(context.accountId),
        putEndpoint(endpoint),
        putSecret(context.accountId, endpoint.id, sealed),
        ...(stored ? [putStoredResponse(stored)] : []),
      ]);
    } catch (error) {
      if ((error as Error).name !== 'TransactionConflictException' || attempt + 1 === ATTEMPTS) throw error;
      await pause(attempt + 2);
      continue;
    }
    if (result.outcome === 'written') return created(location, { webhook_endpoint: presentWebhookEndpoint(endpoint, secret) });
    if (scope && result.failed.has(3)) {
      const earlier = await storedResponseAfterConflict(result.failed.get(3), scope);
      if (earlier) return replay(earlier, scope);
      continue; // the stored response expired in between: create anew
    }
    if (result.failed.has(0)) {
      throw conflict(`An account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints: delete one before creating another`);
    }
    if (result.failed.has(1)) freshIdCollided('webhookEndpoints', endpoint.id);
    if (result.failed.has(2)) freshIdCollided('webhookSecrets', endpoint.id);
  }
  throw serviceUnavailable();
});
