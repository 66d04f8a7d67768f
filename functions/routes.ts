import type { BucketAccess } from './buckets.ts';
import type { SchemaName } from './http/schemas.ts';
import type { QueueId } from './queues.ts';
import type { KeyId, KmsAction, SecretId } from './secrets.ts';
import type { TableId } from './tables.ts';

/**
 * The route table: every operation of tillgate, declared once. The CDK stack builds one API
 * Gateway method and one Lambda function per row (with grants from `tables`), a 405 mock method
 * per path, the local server routes requests with it, and the tests walk it. A row also says what
 * its operation accepts (body, path and query schemas, Idempotency-Key, If-Match): `api()` checks
 * the handler against it, and the OpenAPI documents, the bench and the smoke checks read it.
 */
export type HostId = 'core' | 'pos';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * The scope a token needs to call a route: `pos` (tills), `core` (back office and
 * integrations). A token of scope `all` may call every route.
 */
export type RouteScope = 'pos' | 'core';

/**
 * The DynamoDB actions a function may take on a table: exactly the calls its code makes, so its
 * IAM policy is least privilege (test/infra/stack.test.ts compares them). Inside a transaction
 * a Put, Update or Delete is authorised as PutItem, UpdateItem or DeleteItem, a ConditionCheck as
 * ConditionCheckItem. A write asked to return the item on a failed condition
 * (ReturnValuesOnConditionCheckFailure) reads that item: declare GetItem with it. A BatchGetCommand
 * is BatchGetItem on each table it reads. Query is granted on the table's indexes too; every other
 * action on the table only.
 */
export type DynamoAction = 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'ConditionCheckItem';
export type TableAccess = readonly DynamoAction[];

/**
 * The KMS actions a function takes with each key it uses: exactly the calls its code makes
 * (functions/runtime/envelope.ts: GenerateDataKey to encrypt, Decrypt to read). The stack grants
 * them in the function's role and names the role in the key's policy with them, and nothing else
 * may use the key (test/infra/stack.test.ts).
 */
export type KeyAccess = Readonly<Partial<Record<KeyId, readonly KmsAction[]>>>;

/** The routes that make a signing secret: they encrypt it (a data key from KMS), never decrypt. */
const SEALS_WEBHOOK_SECRETS = { webhookSecrets: ['GenerateDataKey'] } as const satisfies KeyAccess;

/** Every function reads its caller's token (functions/http/tokens.ts). */
const TOKEN_LOOKUP = { apiKeys: ['GetItem'] } as const satisfies Partial<Record<TableId, TableAccess>>;
/** Ids come in blocks from one counter (functions/data/ids.ts). */
const ID_BLOCKS = { counters: ['UpdateItem'] } as const satisfies Partial<Record<TableId, TableAccess>>;

/**
 * The request body an operation reads: the schema its handler validates with (a request schema of
 * functions/http/schemas.ts, by name; the handler passes the compiled one and `api()` checks
 * that they agree).
 */
export interface RouteBody {
  /** The one top-level key holding the resource, e.g. `code_generator`. */
  readonly root?: string;
  readonly schema: SchemaName;
  /** POS agents of many versions: `null` means absent and unknown keys are dropped. */
  readonly lenient?: boolean;
  /** The body may be left out (an action with nothing to say: `{}` or no body at all). */
  readonly optional?: boolean;
}

/**
 * A count in a route's answer that moves without a request to the resource (a worker rolls it
 * up): the field `field` of the object under `root`. The answer's ETag then keeps it apart,
 * `W/"<hash of the rest>.<count>"` (functions/http/etags.ts, entityTag): a conditional GET sees
 * it change, a PATCH's If-Match does not.
 */
export interface EtagCount {
  readonly root: string;
  readonly field: string;
}

/** The generator's `times_redeemed`: uses held across its codes, rolled up from its shards (functions/workers.ts). */
export const GENERATOR_USES: EtagCount = { root: 'code_generator', field: 'times_redeemed' };

/** What a till tried, in the cashier's words: the pos host's error texts name it (functions/http/hosts/pos.ts). */
export interface TillAttempt {
  /** `void`, `redemption`, `check`: "This void …". */
  readonly noun: string;
  /** `Voiding`, `Redemption`: "… is temporarily unavailable" (names the noun's act, so the text says what the till tried). */
  readonly activity: string;
}

interface RouteRow {
  /** Names the operation everywhere: function, log field, metric dimension, OpenAPI operationId. */
  readonly operationId: string;
  readonly method: HttpMethod;
  /** API Gateway resource path, parameters in braces. */
  readonly path: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  /** The token scope this route needs (a token of scope `all` has every scope). */
  readonly scope: RouteScope;
  /** The tables the function touches, each with the DynamoDB actions it takes there. */
  readonly tables: Readonly<Partial<Record<TableId, TableAccess>>>;
  /** Queues (functions/queues.ts) the function sends messages to. */
  readonly queues?: readonly QueueId[];
  /** S3 buckets (functions/buckets.ts) the function uses, with exactly these actions on their objects. */
  readonly buckets?: BucketAccess;
  /** Secrets (functions/secrets.ts) the function reads: it gets each one's ARN and GetSecretValue on it, nothing more. */
  readonly secrets?: readonly SecretId[];
  /** KMS keys (functions/secrets.ts, `keys`) the function uses: it gets each one's ARN and exactly these actions, in its role and in the key's policy. */
  readonly keys?: KeyAccess;
  readonly summary: string;
  /** The request body it reads; a route without one ignores any body. */
  readonly body?: RouteBody;
  /** The schema of its path parameters (the braces of `path`), by name. */
  readonly params?: SchemaName;
  /** The schema of its query parameters, by name; a route without one ignores the query. */
  readonly query?: SchemaName;
  /** It accepts an Idempotency-Key (functions/http/idempotency.ts): a repeat gets the first answer. */
  readonly idempotencyKey?: true;
  /**
   * It accepts If-Match: a mismatch with the current ETag (its count left out, see countInEtag)
   * answers 412 and changes nothing.
   */
  readonly ifMatch?: true;
  /** A count its answer holds that moves on its own: its ETag is made in two parts (EtagCount). */
  readonly countInEtag?: EtagCount;
}

/** A pos route names what the till tries, so every cashier text of its errors can say it. */
export type Route = RouteRow & ({ readonly host: 'core'; readonly till?: never } | { readonly host: 'pos'; readonly till: TillAttempt });

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
    description: 'Point-of-sale agents: voided transactions, redeemed and checked codes.',
    localPort: 3001,
  },
};

export const routes: readonly Route[] = [
  {
    operationId: 'createCodeGenerator',
    host: 'core',
    method: 'POST',
    path: '/v1.0/codegen',
    entry: 'functions/codes/create-code-generator.ts',
    scope: 'core',
    tables: {
      ...TOKEN_LOOKUP,
      ...ID_BLOCKS,
      codeGenerators: ['PutItem', 'GetItem'],
      events: ['PutItem', 'GetItem'],
      idempotencyKeys: ['GetItem', 'PutItem'],
      // The pool of a budget set at creation (data/promotion-shards.ts openBudget).
      promotionShards: ['PutItem'],
    },
    body: { root: 'code_generator', schema: 'codeGeneratorCreate' },
    idempotencyKey: true,
    countInEtag: GENERATOR_USES,
    summary: 'Create a code generator',
  },
  {
    operationId: 'listCodeGenerators',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen',
    entry: 'functions/codes/list-code-generators.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, codeGenerators: ['Query'] },
    // Its cursors are encrypted and authenticated with the cursor key (functions/http/pagination.ts).
    secrets: ['cursorKey'],
    query: 'codeGeneratorListQuery',
    summary: "List the account's code generators, optionally of one store",
  },
  {
    operationId: 'getCodeGenerator',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen/{id}',
    entry: 'functions/codes/get-code-generator.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, codeGenerators: ['GetItem'] },
    params: 'idPath',
    countInEtag: GENERATOR_USES,
    summary: 'Retrieve a code generator',
  },
  {
    operationId: 'updateCodeGenerator',
    host: 'core',
    method: 'PATCH',
    path: '/v1.0/codegen/{id}',
    entry: 'functions/codes/update-code-generator.ts',
    scope: 'core',
    // The change and its event in one transaction, then every shard of the promotion brought to
    // the new version (one UpdateItem each) and that recorded on the generator (data/promotion-shards.ts).
    tables: {
      ...TOKEN_LOOKUP,
      ...ID_BLOCKS,
      codeGenerators: ['GetItem', 'UpdateItem'],
      events: ['PutItem', 'GetItem'],
      // A budget set where there was none: its pool (Put), counted from a snapshot of the shards (TransactGetItems: GetItem).
      promotionShards: ['BatchGetItem', 'UpdateItem', 'PutItem', 'GetItem'],
    },
    params: 'idPath',
    body: { root: 'code_generator', schema: 'codeGeneratorPatch' },
    ifMatch: true,
    countInEtag: GENERATOR_USES,
    summary: "Change a code generator's status, description, promotion terms or limits",
  },
  {
    operationId: 'issueCodes',
    host: 'core',
    method: 'POST',
    path: '/v1.0/codegen/{id}/codes',
    entry: 'functions/codes/issue-codes.ts',
    scope: 'core',
    // The generator is only read and condition-checked; a ConditionCheck needs no write grant.
    tables: {
      ...TOKEN_LOOKUP,
      ...ID_BLOCKS,
      codeGenerators: ['GetItem', 'ConditionCheckItem'],
      // Codes and the issuance record are put pending, finalised by an Update (and the record's
      // list of pending codes removed by one); free candidates are looked for with one BatchGetItem.
      codes: ['PutItem', 'UpdateItem', 'BatchGetItem'],
      events: ['PutItem', 'GetItem'],
      idempotencyKeys: ['GetItem', 'PutItem'],
      // Id blocks, and the account's issued codes (data/code-quota.ts): read first, raised in the
      // completing transaction, the item returned on a failed condition.
      counters: ['UpdateItem', 'GetItem'],
    },
    // An issuance of more than one transaction: its finalisation check, before its first write.
    queues: ['issuanceFinalisation'],
    params: 'idPath',
    body: { schema: 'codesIssue' },
    idempotencyKey: true,
    summary: 'Issue codes from a code generator',
  },
  {
    operationId: 'createIssuanceJob',
    host: 'core',
    method: 'POST',
    path: '/v1.0/codegen/{id}/issuance_jobs',
    entry: 'functions/codes/create-issuance-job.ts',
    scope: 'core',
    tables: {
      ...TOKEN_LOOKUP,
      // The generator's settings (GetItem), its status checked in the creating transaction.
      codeGenerators: ['GetItem', 'ConditionCheckItem'],
      idempotencyKeys: ['GetItem', 'PutItem'],
      // Id blocks; the account's issued codes (the quota: read first, taken in the transaction, the
      // item returned on a failed condition); the job (PutItem) and the account's running jobs.
      counters: ['UpdateItem', 'GetItem', 'PutItem'],
    },
    // The job's start message, before its first write (functions/codes/issuance-job-messages.ts).
    queues: ['issuanceJobs'],
    params: 'idPath',
    body: { schema: 'issuanceJobCreate' },
    idempotencyKey: true,
    summary: 'Start an issuance job of up to 1,000,000 codes',
  },
  {
    operationId: 'getIssuanceJob',
    host: 'core',
    method: 'GET',
    path: '/v1.0/issuance_jobs/{id}',
    entry: 'functions/codes/get-issuance-job.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, counters: ['GetItem'] },
    params: 'idPath',
    summary: "Retrieve an issuance job's progress",
  },
  {
    operationId: 'createExport',
    host: 'core',
    method: 'POST',
    path: '/v1.0/codegen/{id}/exports',
    entry: 'functions/codes/create-export.ts',
    scope: 'core',
    // The generator read (404 for another account's), the export record and, with an
    // Idempotency-Key, the stored answer in one transaction; the message to the writer before it.
    tables: { ...TOKEN_LOOKUP, ...ID_BLOCKS, codeGenerators: ['GetItem'], exports: ['PutItem', 'GetItem'], idempotencyKeys: ['GetItem', 'PutItem'] },
    queues: ['exports'],
    params: 'idPath',
    body: { schema: 'exportCreate', optional: true },
    idempotencyKey: true,
    summary: "Export a generator's codes (all, redeemed or unredeemed) as a CSV file on S3",
  },
  {
    operationId: 'getExport',
    host: 'core',
    method: 'GET',
    path: '/v1.0/exports/{id}',
    entry: 'functions/codes/get-export.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, exports: ['GetItem'] },
    // It signs a download URL: the URL carries this function's GetObject permission, nothing more.
    buckets: { exports: ['s3:GetObject'] },
    params: 'idPath',
    summary: 'Retrieve an export: its progress, then a download URL for its CSV file',
  },
  {
    operationId: 'getCode',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen/{id}/codes/{code}',
    entry: 'functions/codes/get-code.ts',
    scope: 'core',
    // The code (a pending one's issuance record too) and its generator (the current maximum); a
    // code counted over shards, what each shard holds (one consistent BatchGetItem).
    tables: { ...TOKEN_LOOKUP, codes: ['GetItem'], codeGenerators: ['GetItem'], codeShards: ['BatchGetItem'] },
    params: 'codePath',
    summary: 'Look up an issued code',
  },
  {
    operationId: 'listCodes',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen/{id}/codes',
    entry: 'functions/codes/list-codes.ts',
    scope: 'core',
    // Query on the by_redeemed index (both partitions side by side for the whole list), beside a
    // read of the generator (its current maximum); the issuance record of an entry pending of a
    // job, once per environment (GetItem).
    tables: { ...TOKEN_LOOKUP, codeGenerators: ['GetItem'], codes: ['Query', 'GetItem'] },
    // Its cursors are encrypted and authenticated with the cursor key (functions/http/pagination.ts).
    secrets: ['cursorKey'],
    params: 'idPath',
    query: 'codeListQuery',
    summary: "List a code generator's issued codes, optionally only the redeemed or unredeemed ones",
  },
  {
    operationId: 'listCodeRedemptions',
    host: 'core',
    method: 'GET',
    path: '/v1.0/codegen/{id}/codes/{code}/redemptions',
    entry: 'functions/codes/list-code-redemptions.ts',
    scope: 'core',
    // The code (its holder, whether it is counted over shards), which of its shards hold uses
    // (one BatchGetItem), then one Query of holder records per such shard.
    tables: { ...TOKEN_LOOKUP, codes: ['GetItem'], codeShards: ['BatchGetItem'], codeRedemptions: ['Query'] },
    // Its cursors are encrypted and authenticated with the cursor key (functions/http/pagination.ts).
    secrets: ['cursorKey'],
    params: 'codePath',
    query: 'codeRedemptionListQuery',
    summary: 'List the transactions holding a code, in redemption order',
  },
  {
    operationId: 'listEvents',
    host: 'core',
    method: 'GET',
    path: '/v1.0/events',
    entry: 'functions/events/list-events.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, events: ['Query'] },
    // Its cursors are encrypted and authenticated with the cursor key (functions/http/pagination.ts).
    secrets: ['cursorKey'],
    query: 'listQuery',
    summary: "List the account's live events: the feed to process and acknowledge",
  },
  {
    operationId: 'getEvent',
    host: 'core',
    method: 'GET',
    path: '/v1.0/events/{id}',
    entry: 'functions/events/get-event.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, events: ['GetItem'] },
    params: 'idPath',
    summary: 'Retrieve an event record',
  },
  {
    operationId: 'deleteEvent',
    host: 'core',
    method: 'DELETE',
    path: '/v1.0/events/{id}',
    entry: 'functions/events/delete-event.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, events: ['DeleteItem'] },
    params: 'idPath',
    summary: 'Acknowledge (delete) an event record',
  },
  {
    operationId: 'voidTransaction',
    host: 'pos',
    method: 'POST',
    path: '/v2.0/voided_transactions',
    entry: 'functions/redemption/void-transaction.ts',
    scope: 'pos',
    // A void releases the codes its transaction holds (Updates returning the item on a failed condition).
    tables: {
      ...TOKEN_LOOKUP,
      ...ID_BLOCKS,
      posTransactions: ['PutItem', 'UpdateItem', 'GetItem'],
      codes: ['UpdateItem', 'GetItem'],
      events: ['PutItem', 'GetItem'],
      // Every use given back: the promotion's shard, a multi-use code's shard and holder record, the customer's count.
      promotionShards: ['UpdateItem'],
      codeShards: ['UpdateItem'],
      codeRedemptions: ['DeleteItem'],
      customerUses: ['UpdateItem'],
    },
    // A void gives back the uses its customer held (functions/runtime/customer-key.ts).
    secrets: ['customerKey'],
    body: { root: 'transaction', schema: 'voidTransaction', lenient: true },
    till: { noun: 'void', activity: 'Voiding' },
    summary: 'Void a point-of-sale transaction, releasing the codes it holds',
  },
  {
    operationId: 'redeemCodes',
    host: 'pos',
    method: 'POST',
    path: '/v2.0/redeemed_codes',
    entry: 'functions/redemption/redeem-codes.ts',
    scope: 'pos',
    // The codes and the transaction are read in one BatchGetItem (a pending code's issuance by
    // GetItem); generators are read (settings: GetItem on a cache miss, BatchGetItem afresh for a
    // refusal) and condition-checked when a promotion's shard is created; one shard per promotion,
    // the codes and the transaction are updated, returning the item on a failed condition.
    tables: {
      ...TOKEN_LOOKUP,
      ...ID_BLOCKS,
      codeGenerators: ['GetItem', 'BatchGetItem', 'ConditionCheckItem'],
      // The counts (data/counts.ts): shards and pools written, returning the item on a failed
      // condition, and read whole in a snapshot (TransactGetItems: GetItem) near a limit.
      promotionShards: ['UpdateItem', 'PutItem', 'GetItem'],
      codeShards: ['UpdateItem', 'PutItem', 'GetItem'],
      codeRedemptions: ['PutItem'],
      customerUses: ['UpdateItem', 'GetItem'],
      codes: ['BatchGetItem', 'GetItem', 'UpdateItem'],
      posTransactions: ['BatchGetItem', 'UpdateItem', 'GetItem'],
      events: ['PutItem', 'GetItem'],
      // Id blocks, and the guessing limit's counts of unknown codes (data/unknown-codes.ts).
      counters: ['UpdateItem', 'GetItem'],
    },
    // transaction.customer_id is counted by its keyed hash (functions/runtime/customer-key.ts).
    secrets: ['customerKey'],
    body: { root: 'transaction', schema: 'codesRedemption', lenient: true },
    till: { noun: 'redemption', activity: 'Redemption' },
    summary: 'Redeem codes as part of a point-of-sale transaction',
  },
  {
    operationId: 'validateCodes',
    host: 'pos',
    method: 'POST',
    path: '/v2.0/validated_codes',
    entry: 'functions/redemption/validate-codes.ts',
    scope: 'pos',
    tables: {
      ...TOKEN_LOOKUP,
      codeGenerators: ['GetItem', 'BatchGetItem'],
      codes: ['BatchGetItem', 'GetItem'],
      posTransactions: ['BatchGetItem'],
      // The counts of codes with limits: pools and customers' counts in one BatchGetItem, a snapshot (GetItem) near a limit.
      promotionShards: ['BatchGetItem', 'GetItem'],
      codeShards: ['BatchGetItem', 'GetItem'],
      customerUses: ['BatchGetItem'],
      // The guessing limit's counts of unknown codes (data/unknown-codes.ts).
      counters: ['UpdateItem', 'GetItem'],
    },
    secrets: ['customerKey'],
    body: { root: 'transaction', schema: 'codesRedemption', lenient: true },
    till: { noun: 'check', activity: 'Checking codes' },
    summary: 'Check whether codes could be redeemed for a point-of-sale transaction now, writing nothing',
  },
  {
    operationId: 'createWebhookEndpoint',
    host: 'core',
    method: 'POST',
    path: '/v1.0/webhook_endpoints',
    entry: 'functions/webhooks/create-webhook-endpoint.ts',
    scope: 'core',
    // The count item is updated and the endpoint put in one transaction; the put returns the item on
    // a failed condition (an id collision), so it reads it. The secret is written, never read.
    tables: {
      ...TOKEN_LOOKUP,
      ...ID_BLOCKS,
      webhookEndpoints: ['UpdateItem', 'PutItem', 'GetItem'],
      webhookSecrets: ['PutItem'],
      idempotencyKeys: ['GetItem', 'PutItem'],
    },
    keys: SEALS_WEBHOOK_SECRETS,
    body: { root: 'webhook_endpoint', schema: 'webhookEndpointCreate' },
    idempotencyKey: true,
    summary: 'Register a webhook endpoint; its signing secret is shown in this answer only',
  },
  {
    operationId: 'listWebhookEndpoints',
    host: 'core',
    method: 'GET',
    path: '/v1.0/webhook_endpoints',
    entry: 'functions/webhooks/list-webhook-endpoints.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, webhookEndpoints: ['Query'] },
    // Its cursors are encrypted and authenticated with the cursor key (functions/http/pagination.ts).
    secrets: ['cursorKey'],
    query: 'listQuery',
    summary: "List the account's webhook endpoints",
  },
  {
    operationId: 'getWebhookEndpoint',
    host: 'core',
    method: 'GET',
    path: '/v1.0/webhook_endpoints/{id}',
    entry: 'functions/webhooks/get-webhook-endpoint.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, webhookEndpoints: ['GetItem'] },
    params: 'idPath',
    summary: 'Retrieve a webhook endpoint',
  },
  {
    operationId: 'updateWebhookEndpoint',
    host: 'core',
    method: 'PATCH',
    path: '/v1.0/webhook_endpoints/{id}',
    entry: 'functions/webhooks/update-webhook-endpoint.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, webhookEndpoints: ['GetItem', 'UpdateItem'] },
    params: 'idPath',
    body: { root: 'webhook_endpoint', schema: 'webhookEndpointPatch' },
    ifMatch: true,
    summary: "Change a webhook endpoint's URL, event types, description or status",
  },
  {
    operationId: 'deleteWebhookEndpoint',
    host: 'core',
    method: 'DELETE',
    path: '/v1.0/webhook_endpoints/{id}',
    entry: 'functions/webhooks/delete-webhook-endpoint.ts',
    scope: 'core',
    // The secret is deleted with the endpoint, never read.
    tables: { ...TOKEN_LOOKUP, webhookEndpoints: ['DeleteItem', 'UpdateItem'], webhookSecrets: ['DeleteItem'] },
    params: 'idPath',
    summary: 'Delete a webhook endpoint: nothing more is sent to it',
  },
  {
    operationId: 'rotateWebhookSecret',
    host: 'core',
    method: 'POST',
    path: '/v1.0/webhook_endpoints/{id}/rotate_secret',
    entry: 'functions/webhooks/rotate-webhook-secret.ts',
    scope: 'core',
    // The new secret is written beside the previous one, never read.
    tables: { ...TOKEN_LOOKUP, webhookEndpoints: ['GetItem', 'ConditionCheckItem'], webhookSecrets: ['UpdateItem'] },
    keys: SEALS_WEBHOOK_SECRETS,
    params: 'idPath',
    body: { schema: 'emptyObject', optional: true },
    summary: "Replace a webhook endpoint's signing secret (the previous one still signs for 24 hours)",
  },
  {
    operationId: 'listWebhookDeliveries',
    host: 'core',
    method: 'GET',
    path: '/v1.0/webhook_endpoints/{id}/deliveries',
    entry: 'functions/webhooks/list-webhook-deliveries.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, webhookEndpoints: ['GetItem'], webhookDeliveries: ['Query'] },
    // Its cursors are encrypted and authenticated with the cursor key (functions/http/pagination.ts).
    secrets: ['cursorKey'],
    params: 'idPath',
    query: 'listQuery',
    summary: "List a webhook endpoint's deliveries in ascending event id order",
  },
  {
    operationId: 'retryWebhookDelivery',
    host: 'core',
    method: 'POST',
    path: '/v1.0/webhook_endpoints/{id}/deliveries/{event_id}/retry',
    entry: 'functions/webhooks/retry-webhook-delivery.ts',
    scope: 'core',
    tables: { ...TOKEN_LOOKUP, webhookEndpoints: ['GetItem'], webhookDeliveries: ['GetItem', 'UpdateItem'] },
    queues: ['webhookDeliveries'],
    params: 'deliveryPath',
    body: { schema: 'emptyObject', optional: true },
    summary: 'Send one delivery again now, signed afresh',
  },
];

/** The row of `operationId`. */
export function routeOf(operationId: string): Route {
  const route = routes.find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`No route ${operationId} in functions/routes.ts`);
  return route;
}

/** The path a client sends for `operationId`: its row's path with each parameter filled in, URI-encoded. */
export function pathOf(operationId: string, params: Readonly<Record<string, string | number>> = {}): string {
  const route = routeOf(operationId);
  return route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${operationId}: no value for {${name}} of ${route.path}`);
    return encodeURIComponent(String(value));
  });
}
