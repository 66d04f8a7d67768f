/**
 * Every DynamoDB table of tillgate, declared once. The CDK stack creates them from this list,
 * the local stack and the tests create them in DynamoDB Local from it, and the data-access
 * modules find their table's name through the environment variable named here.
 */
export type KeyType = 'S' | 'N';

export interface KeyAttribute {
  readonly name: string;
  readonly type: KeyType;
}

export interface TableSpec {
  /** Environment variable through which a function learns the table's physical name. */
  readonly envVar: string;
  readonly partitionKey: KeyAttribute;
  /** Epoch-seconds attribute after which DynamoDB may delete the item. */
  readonly timeToLiveAttribute?: string;
  readonly indexes?: readonly {
    readonly name: string;
    readonly partitionKey: KeyAttribute;
    readonly sortKey: KeyAttribute;
  }[];
  readonly description: string;
}

export const tables = {
  apiKeys: {
    envVar: 'API_KEYS_TABLE',
    partitionKey: { name: 'token_hash', type: 'S' },
    description: 'API tokens, keyed by the SHA-256 of the token; each belongs to one account.',
  },
  counters: {
    envVar: 'COUNTERS_TABLE',
    partitionKey: { name: 'name', type: 'S' },
    description: 'Sequences that allocate the integer ids of code generators and events.',
  },
  codeGenerators: {
    envVar: 'CODE_GENERATORS_TABLE',
    partitionKey: { name: 'id', type: 'N' },
    indexes: [
      {
        name: 'by_account',
        partitionKey: { name: 'account_id', type: 'N' },
        sortKey: { name: 'id', type: 'N' },
      },
    ],
    description: 'Code generators, keyed by their integer id.',
  },
  events: {
    envVar: 'EVENTS_TABLE',
    partitionKey: { name: 'id', type: 'N' },
    timeToLiveAttribute: 'expires_at',
    indexes: [
      {
        name: 'by_account',
        partitionKey: { name: 'account_id', type: 'N' },
        sortKey: { name: 'id', type: 'N' },
      },
    ],
    description: 'Event records, one per state change, removed after the retention period.',
  },
  voidedTransactions: {
    envVar: 'VOIDED_TRANSACTIONS_TABLE',
    partitionKey: { name: 'void_key', type: 'S' },
    description: 'Voids, keyed by account, site and POS transaction id so a retry finds the first.',
  },
  idempotencyKeys: {
    envVar: 'IDEMPOTENCY_KEYS_TABLE',
    partitionKey: { name: 'idempotency_key', type: 'S' },
    timeToLiveAttribute: 'expires_at',
    description: 'First responses to requests sent with an Idempotency-Key header.',
  },
} as const satisfies Record<string, TableSpec>;

export type TableId = keyof typeof tables;

export const tableIds = Object.keys(tables) as TableId[];
