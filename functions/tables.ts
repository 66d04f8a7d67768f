/**
 * Every DynamoDB table of tillgate, declared once. The CDK stack creates them from this list,
 * the local stack and the tests create them in DynamoDB Local from it, and the data-access
 * modules find their table's name through the environment variable named here.
 *
 * Every key of an account's record starts with its account id, so a request of one account
 * cannot address another account's record: isolation by construction, not by a check after the
 * read. No table has an item that every write of every account touches (ids come in blocks, see
 * data/ids.ts).
 */
type KeyType = 'S' | 'N';

export interface KeyAttribute {
  readonly name: string;
  readonly type: KeyType;
}

interface IndexSpec {
  readonly name: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey: KeyAttribute;
  /** Non-key attributes copied into the index: exactly what its one reader returns. */
  readonly nonKeyAttributes: readonly string[];
}

export interface TableSpec {
  /** Environment variable through which a function learns the table's physical name. */
  readonly envVar: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  /** Epoch-seconds attribute after which DynamoDB may delete the item. */
  readonly timeToLiveAttribute?: string;
  readonly indexes?: readonly IndexSpec[];
  /** A DynamoDB stream of the table's items as written (what the stream workers of workers.ts read). */
  readonly stream?: 'NEW_IMAGE';
  readonly description: string;
}

/** What the codes list shows of a code (and whether it shows: `pending`, `issuance_id`), projected into the codes' index. */
const CODE_LIST_ATTRIBUTES = [
  'code_generator_id',
  'issued_at',
  'redeemed_at',
  'site_id',
  'pos_transaction_id',
  'discount_amount',
  'currency',
  // A pooled code's uses, as the stream worker rolls its shards up (times_redeemed, which may lag).
  'pooled',
  'shard_uses',
  // An entry pending of an issuance without a record (a job not complete) is left out of the list.
  'pending',
  'issuance_id',
] as const;

export const tables = {
  apiKeys: {
    envVar: 'API_KEYS_TABLE',
    partitionKey: { name: 'token_hash', type: 'S' },
    description: 'API tokens, keyed by the SHA-256 of the token; each belongs to one account.',
  },
  counters: {
    envVar: 'COUNTERS_TABLE',
    partitionKey: { name: 'name', type: 'S' },
    // Only the guessing limit's items expire; the id sequence and the accounts' counts have no expires_at.
    timeToLiveAttribute: 'expires_at',
    description:
      "The id sequence, from which each execution environment reserves a block of ids at a time; each account's issued codes (the quota, data/code-quota.ts); each token's unknown codes per minute (the guessing limit, data/unknown-codes.ts; they expire); issuance jobs and each account's running jobs (data/issuance-jobs.ts).",
  },
  codeGenerators: {
    envVar: 'CODE_GENERATORS_TABLE',
    partitionKey: { name: 'account_id', type: 'N' },
    sortKey: { name: 'id', type: 'N' },
    indexes: [
      {
        // GET /v1.0/codegen?store_id=…: full pages in id order, one Query.
        name: 'by_store',
        partitionKey: { name: 'store_key', type: 'S' },
        sortKey: { name: 'id', type: 'N' },
        nonKeyAttributes: [
          'account_id',
          'generation_type',
          'buffer_type',
          'code_length',
          'description',
          'prefix',
          'store_id',
          'status',
          'created_at',
          'updated_at',
          'discount',
          'minimum_basket',
          'valid_from',
          'valid_until',
          'site_ids',
          'max_redemptions_per_code',
          'max_redemptions',
          'max_redemptions_per_customer',
          'terms_version',
          'shard_uses',
        ],
      },
    ],
    description:
      "Code generators, keyed by account and id; the by_store index lists one store's generators. `shard_uses` holds what each of the promotion's shards holds (the rollUpPromotionUses worker).",
  },
  promotionShards: {
    envVar: 'PROMOTION_SHARDS_TABLE',
    partitionKey: { name: 'shard_key', type: 'S' },
    // Each shard's uses (`used`) reach the generator through the rollUpPromotionUses worker.
    stream: 'NEW_IMAGE',
    description:
      "A promotion's shards, keyed by account, code generator and shard (0-63, PROMOTION_SHARDS): the version of the generator's status and terms, which each redemption proves current on one of them (data/promotion-shards.ts), and the uses held through it; its stream rolls them up onto the generator.",
  },
  codeRedemptions: {
    envVar: 'CODE_REDEMPTIONS_TABLE',
    partitionKey: { name: 'holder_shard', type: 'S' },
    sortKey: { name: 'redeemed_order', type: 'S' },
    description:
      "The transactions holding a multi-use code, keyed by the code's key and shard, then redemption time and transaction: GET …/codes/{code}/redemptions merges the shards' Queries.",
  },
  customerUses: {
    envVar: 'CUSTOMER_USES_TABLE',
    partitionKey: { name: 'customer_key', type: 'S' },
    description: 'Uses one customer holds of one promotion, keyed by account, code generator and the keyed hash of the customer id (never the id).',
  },
  codes: {
    envVar: 'CODES_TABLE',
    partitionKey: { name: 'code_key', type: 'S' },
    indexes: [
      {
        // GET /v1.0/codegen/{id}/codes: one generator's issued codes in code order, one partition
        // per state (?redeemed=true|false), the whole list the merge of both (data/codes.ts).
        // Sparse: a code written pending by an issuance request has no redeemed_key until it is
        // finalised; an issuance job's codes have theirs from the start (the list drops them while
        // their issuance has no record). One index, not two: a job's code costs 1 write unit on
        // the table and 1 on the index.
        name: 'by_redeemed',
        partitionKey: { name: 'redeemed_key', type: 'S' },
        sortKey: { name: 'code', type: 'S' },
        nonKeyAttributes: CODE_LIST_ATTRIBUTES,
      },
    ],
    description:
      "Issued codes, one item each keyed by account and CODE (upper case), so DynamoDB itself keeps a code unique in its account; the holder of a redeemed code, and a multi-use code's uses per shard (`shard_uses`, the rollUpCodeUses worker); issuance records.",
  },
  codeShards: {
    envVar: 'CODE_SHARDS_TABLE',
    partitionKey: { name: 'shard_key', type: 'S' },
    // Each shard's uses (`used`) reach the code through the rollUpCodeUses worker.
    stream: 'NEW_IMAGE',
    description:
      "A multi-use code's counts, keyed by the code's key and shard (0-63) or `pool`: the uses held through each shard and the grant it may still give (data/counts.ts), so that one code's redemptions spread over many items; its stream rolls the uses up onto the code.",
  },
  exports: {
    envVar: 'EXPORTS_TABLE',
    partitionKey: { name: 'account_id', type: 'N' },
    sortKey: { name: 'id', type: 'N' },
    description:
      "CSV exports of a generator's codes, keyed by account and id: what was asked, the status, the rows written and the S3 object that holds the file (functions/codes/write-exports.ts).",
  },
  events: {
    envVar: 'EVENTS_TABLE',
    partitionKey: { name: 'account_id', type: 'N' },
    sortKey: { name: 'id', type: 'N' },
    timeToLiveAttribute: 'expires_at',
    // New events only reach the webhook fan-out (functions/workers.ts); it ignores REMOVEs.
    stream: 'NEW_IMAGE',
    description: "Event records, one per state change, keyed by account and id: the account's feed is one Query; its stream drives webhook deliveries.",
  },
  posTransactions: {
    envVar: 'POS_TRANSACTIONS_TABLE',
    partitionKey: { name: 'transaction_key', type: 'S' },
    description:
      'Point-of-sale transactions, keyed by account, site and POS transaction id: the codes each holds (at most 24, MAX_HELD_CODES) and its void, so a retry finds the first.',
  },
  idempotencyKeys: {
    envVar: 'IDEMPOTENCY_KEYS_TABLE',
    partitionKey: { name: 'idempotency_key', type: 'S' },
    timeToLiveAttribute: 'expires_at',
    description: 'First responses to requests sent with an Idempotency-Key header, per account and route.',
  },
  webhookEndpoints: {
    envVar: 'WEBHOOK_ENDPOINTS_TABLE',
    partitionKey: { name: 'account_id', type: 'N' },
    sortKey: { name: 'id', type: 'N' },
    description:
      "Webhook endpoints, keyed by account and id (no secret here); id 0 is the account's endpoint count, which each create and delete changes in its transaction (at most 10).",
  },
  webhookSecrets: {
    envVar: 'WEBHOOK_SECRETS_TABLE',
    partitionKey: { name: 'endpoint_key', type: 'S' },
    description:
      'Signing secrets of webhook endpoints (current, and the previous one for 24 h after a rotation), keyed by account and endpoint. Only the sender may read them.',
  },
  webhookDeliveries: {
    envVar: 'WEBHOOK_DELIVERIES_TABLE',
    partitionKey: { name: 'endpoint_key', type: 'S' },
    sortKey: { name: 'event_id', type: 'N' },
    timeToLiveAttribute: 'expires_at',
    description: "Deliveries of events to webhook endpoints, keyed by account and endpoint, then event id: an endpoint's list is one Query.",
  },
} as const satisfies Record<string, TableSpec>;

/** The shards of each promotion in promotionShards (why 64: docs/redemption.md, "One promotion at a chain's peak"). */
export const PROMOTION_SHARDS = 64;

/**
 * At most this many codes per transaction, so its void releases them all in one DynamoDB
 * transaction of at most 100 items: per code its item, or its shard and its holder record, plus
 * per promotion a shard and a customer's count (4 × 24), plus the transaction and two events.
 */
export const MAX_HELD_CODES = 24;

export type TableId = keyof typeof tables;

export const tableIds = Object.keys(tables) as TableId[];
