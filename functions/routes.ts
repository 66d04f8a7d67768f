import type { QueueId } from './commons/queues.ts';
import type { TableId } from './commons/tables.ts';

/**
 * The route table: every operation of tillgate, declared once. The CDK stack builds one API
 * Gateway method and one Lambda function per row (with grants from `tables`), the local server
 * routes requests with it, and the tests walk it.
 */
export type HostId = 'core' | 'pos';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * The scope a token needs to call a route: `pos` (tills), `core` (back office and
 * integrations). A token of scope `all` may call every route.
 */
export type RouteScope = 'pos' | 'core';

/**
 * `read` grants reads only; `write` grants reads and writes; `write-only` grants item writes
 * without any read (the webhook secrets: routes create, rotate and delete them, only the sender
 * reads them).
 */
export type TableAccess = 'read' | 'write' | 'write-only';

export interface Route {
  /** Names the operation everywhere: function, log field, metric dimension, OpenAPI operationId. */
  readonly operationId: string;
  readonly host: HostId;
  readonly method: HttpMethod;
  /** API Gateway resource path, parameters in braces. */
  readonly path: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  /** The token scope this route needs (a token of scope `all` has every scope). */
  readonly scope: RouteScope;
  readonly tables: Readonly<Partial<Record<TableId, TableAccess>>>;
  /** Queues (functions/commons/queues.ts) the function sends messages to. */
  readonly queues?: readonly QueueId[];
  readonly summary: string;
}

export interface Host {
  readonly id: HostId;
  readonly versionPrefix: string;
  readonly description: string;
  /** Port of this host on the local stack (`npm start`). */
  readonly localPort: number;
}

export const hosts: Readonly<Record<HostId, Host>> = {
  core: {
    id: 'core',
    versionPrefix: '/v1.0',
    description: 'Back-office integrations: code generators and event records.',
    localPort: 3000,
  },
  pos: {
    id: 'pos',
    versionPrefix: '/v2.0',
    description: 'Point-of-sale agents: voided transactions.',
    localPort: 3001,
  },
};

export const routes: readonly Route[] = [
  {
    operationId: 'createCodeGenerator',
    host: 'core',
    method: 'POST',
    path: '/v1.0/codegen',
    entry: 'functions/create-code-generator.ts',
    scope: 'core',
    tables: { apiKeys: 'read', counters: 'write', codeGenerators: 'write', events: 'write', idempotencyKeys: 'write' },
    summary: 'Create a code generator',
  },
  {
    operationId: 'listCodeGenerators',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen',
    entry: 'functions/list-code-generators.ts',
    scope: 'core',
    tables: { apiKeys: 'read', codeGenerators: 'read' },
    summary: "List the account's code generators, optionally of one store",
  },
  {
    operationId: 'getCodeGenerator',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen/{id}',
    entry: 'functions/get-code-generator.ts',
    scope: 'core',
    tables: { apiKeys: 'read', codeGenerators: 'read' },
    summary: 'Retrieve a code generator',
  },
  {
    operationId: 'updateCodeGenerator',
    host: 'core',
    method: 'PATCH',
    path: '/v1.0/codegen/{id}',
    entry: 'functions/update-code-generator.ts',
    scope: 'core',
    tables: { apiKeys: 'read', counters: 'write', codeGenerators: 'write', events: 'write' },
    summary: "Change a code generator's status or description",
  },
  {
    operationId: 'issueCodes',
    host: 'core',
    method: 'POST',
    path: '/v1.0/codegen/{id}/codes',
    entry: 'functions/issue-codes.ts',
    // The generator is only read and condition-checked; a ConditionCheck needs no write grant.
    scope: 'core',
    tables: { apiKeys: 'read', counters: 'write', codeGenerators: 'read', codes: 'write', events: 'write', idempotencyKeys: 'write' },
    summary: 'Issue codes from a code generator',
  },
  {
    operationId: 'getCode',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen/{id}/codes/{code}',
    entry: 'functions/get-code.ts',
    scope: 'core',
    tables: { apiKeys: 'read', codes: 'read' },
    summary: 'Look up an issued code',
  },
  {
    operationId: 'listEvents',
    host: 'core',
    method: 'GET',
    path: '/v1.0/events',
    entry: 'functions/list-events.ts',
    scope: 'core',
    tables: { apiKeys: 'read', events: 'read' },
    summary: "List the account's live events: the feed to process and acknowledge",
  },
  {
    operationId: 'getEvent',
    host: 'core',
    method: 'GET',
    path: '/v1.0/events/{id}',
    entry: 'functions/get-event.ts',
    scope: 'core',
    tables: { apiKeys: 'read', events: 'read' },
    summary: 'Retrieve an event record',
  },
  {
    operationId: 'deleteEvent',
    host: 'core',
    method: 'DELETE',
    path: '/v1.0/events/{id}',
    entry: 'functions/delete-event.ts',
    scope: 'core',
    tables: { apiKeys: 'read', events: 'write' },
    summary: 'Acknowledge (delete) an event record',
  },
  {
    operationId: 'voidTransaction',
    host: 'pos',
    method: 'POST',
    path: '/v2.0/voided_transactions',
    entry: 'functions/void-transaction.ts',
    scope: 'pos',
    tables: { apiKeys: 'read', counters: 'write', voidedTransactions: 'write', events: 'write' },
    summary: 'Void a point-of-sale transaction',
  },
  {
    operationId: 'createWebhookEndpoint',
    host: 'core',
    method: 'POST',
    path: '/v1.0/webhook_endpoints',
    entry: 'functions/create-webhook-endpoint.ts',
    scope: 'core',
    tables: { apiKeys: 'read', counters: 'write', webhookEndpoints: 'write', webhookSecrets: 'write-only', idempotencyKeys: 'write' },
    summary: 'Register a webhook endpoint; its signing secret is shown in this answer only',
  },
  {
    operationId: 'listWebhookEndpoints',
    host: 'core',
    method: 'GET',
    path: '/v1.0/webhook_endpoints',
    entry: 'functions/list-webhook-endpoints.ts',
    scope: 'core',
    tables: { apiKeys: 'read', webhookEndpoints: 'read' },
    summary: "List the account's webhook endpoints",
  },
  {
    operationId: 'getWebhookEndpoint',
    host: 'core',
    method: 'GET',
    path: '/v1.0/webhook_endpoints/{id}',
    entry: 'functions/get-webhook-endpoint.ts',
    scope: 'core',
    tables: { apiKeys: 'read', webhookEndpoints: 'read' },
    summary: 'Retrieve a webhook endpoint',
  },
  {
    operationId: 'updateWebhookEndpoint',
    host: 'core',
    method: 'PATCH',
    path: '/v1.0/webhook_endpoints/{id}',
    entry: 'functions/update-webhook-endpoint.ts',
    scope: 'core',
    tables: { apiKeys: 'read', webhookEndpoints: 'write' },
    summary: "Change a webhook endpoint's URL, event types, description or status",
  },
  {
    operationId: 'deleteWebhookEndpoint',
    host: 'core',
    method: 'DELETE',
    path: '/v1.0/webhook_endpoints/{id}',
    entry: 'functions/delete-webhook-endpoint.ts',
    scope: 'core',
    tables: { apiKeys: 'read', webhookEndpoints: 'write', webhookSecrets: 'write-only' },
    summary: 'Delete a webhook endpoint: nothing more is sent to it',
  },
  {
    operationId: 'rotateWebhookSecret',
    host: 'core',
    method: 'POST',
    path: '/v1.0/webhook_endpoints/{id}/rotate_secret',
    entry: 'functions/rotate-webhook-secret.ts',
    scope: 'core',
    tables: { apiKeys: 'read', webhookEndpoints: 'read', webhookSecrets: 'write-only' },
    summary: "Replace a webhook endpoint's signing secret (the previous one still signs for 24 hours)",
  },
  {
    operationId: 'listWebhookDeliveries',
    host: 'core',
    method: 'GET',
    path: '/v1.0/webhook_endpoints/{id}/deliveries',
    entry: 'functions/list-webhook-deliveries.ts',
    scope: 'core',
    tables: { apiKeys: 'read', webhookEndpoints: 'read', webhookDeliveries: 'read' },
    summary: "List a webhook endpoint's deliveries in ascending event id order",
  },
  {
    operationId: 'retryWebhookDelivery',
    host: 'core',
    method: 'POST',
    path: '/v1.0/webhook_endpoints/{id}/deliveries/{event_id}/retry',
    entry: 'functions/retry-webhook-delivery.ts',
    scope: 'core',
    tables: { apiKeys: 'read', webhookEndpoints: 'read', webhookDeliveries: 'write' },
    queues: ['webhookDeliveries'],
    summary: 'Send one delivery again now, signed afresh',
  },
];
