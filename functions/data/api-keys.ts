import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';

const TABLE = tableName('apiKeys');

/**
 * What a token may call: `pos` (the pos host's routes: tills), `core` (the core host's routes:
 * back office and integrations) or `all`. Routes declare the scope they need in routes.ts.
 */
export const TOKEN_SCOPES = ['pos', 'core', 'all'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface ApiKey {
  /** SHA-256 of the token, hex. The token itself is never stored. */
  token_hash: string;
  /** Public handle for listing and revoking, e.g. `key_3f9c…`. */
  key_id: string;
  account_id: number;
  name: string;
  /**
   * Absent on keys written before scopes existed: such a key is refused on every route (403)
   * until an operator gives it a scope (`npm run tokens -- scope KEY_ID SCOPE`); see auth.ts.
   */
  scope?: TokenScope;
  /**
   * The only site_ids a `pos` key may void, redeem and check for (compared exactly); absent: every
   * site, as for every key written before sites could be bound (docs/security.md).
   */
  sites?: string[];
  created_at: string;
  revoked_at?: string;
}

export async function findApiKey(tokenHash: string): Promise<ApiKey | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { token_hash: tokenHash } }));
  return Item as ApiKey | undefined;
}

/**
 * Stores a new key. The put is conditional, so it never overwrites a key; and it is safe to
 * retry: when the SDK retries an attempt that timed out after DynamoDB had written it, the
 * condition fails on our own item, which is then a success, not an error.
 */
export async function saveApiKey(key: ApiKey): Promise<void> {
  try {
    await documents.send(new PutCommand({ TableName: TABLE, Item: key, ConditionExpression: 'attribute_not_exists(token_hash)' }));
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { token_hash: key.token_hash }, ConsistentRead: true }));
    if ((Item as ApiKey | undefined)?.key_id !== key.key_id) throw error;
  }
}

/** For the token tool only: the table holds one item per token, so a scan stays small. */
export async function listApiKeys(): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(new ScanCommand({ TableName: TABLE, ExclusiveStartKey: start }));
    keys.push(...((page.Items ?? []) as ApiKey[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return keys.sort((a, b) => a.account_id - b.account_id || a.created_at.localeCompare(b.created_at));
}

/** Marks a key revoked; returns false when no such key exists. Revoking twice keeps the first date. */
export async function revokeApiKey(keyId: string, now: Date): Promise<ApiKey | undefined> {
  const key = (await listApiKeys()).find((k) => k.key_id === keyId);
  if (!key) return undefined;
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: { token_hash: key.token_hash },
      UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
      ExpressionAttributeValues: { ':now': now.toISOString() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return Attributes as ApiKey;
}

/**
 * Gives an existing key a scope (for the token tool: keys written before scopes existed, or a
 * scope narrowed after the fact) without changing the token its holder already has.
 */
export async function setApiKeyScope(keyId: string, scope: TokenScope): Promise<ApiKey | undefined> {
  const key = (await listApiKeys()).find((k) => k.key_id === keyId);
  if (!key) return undefined;
  // Sites bind a till's token: a key bound to sites stays pos (the token tool says so first).
  if (key.sites !== undefined && scope !== 'pos') throw new Error(`Key ${keyId} is bound to sites: only scope pos may serve them`);
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: TABLE,
      Key: { token_hash: key.token_hash },
      UpdateExpression: 'SET #scope = :scope',
      ConditionExpression: 'attribute_exists(token_hash)',
      ExpressionAttributeNames: { '#scope': 'scope' },
      ExpressionAttributeValues: { ':scope': scope },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return Attributes as ApiKey;
}
