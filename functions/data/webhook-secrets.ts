import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '#runtime/clients';
import { tableName } from '#runtime/config';
import { envelope, isSealed, providerFromEnvironment, type Sealed } from '#runtime/envelope';
import { logger } from '#runtime/observability';
import type { TransactItem } from './transactions.ts';

/**
 * Signing secrets live in their own table: the routes that create, rotate and delete them may
 * only write it (PutItem, UpdateItem, DeleteItem in their route rows: no read action granted),
 * and only the sender may read it (GetItem, functions/workers.ts). No endpoint read, list or log line can carry what it never loaded.
 *
 * At rest every secret is encrypted (runtime/envelope.ts): `secret` and `previous_secret` hold a
 * map `{v, key, iv, data}` (the data key encrypted by the webhookSecrets key of
 * functions/secrets.ts, the nonce, the AES-256-GCM ciphertext of the secret's text with its tag),
 * its additional authenticated data the account and endpoint ids. So the table, its backups and
 * exports hold no secret, and a ciphertext copied into another endpoint's item does not open.
 * The routes that make or rotate a secret only encrypt (GenerateDataKey); only the sender decrypts.
 *
 * Items written before encryption hold the secrets as text (`whsec_…`). The sender encrypts them
 * in place the first time it signs with them (migrateLegacy), and a rotation never keeps a secret
 * in text: it drops it (rotateSecret). docs/security.md, "Signing secrets at rest".
 */
const TABLE = tableName('webhookSecrets');

/** How long the replaced secret keeps signing after a rotation. */
const PREVIOUS_SECRET_SECONDS = 24 * 3600;

const endpointKey = (accountId: number, endpointId: number) => `${accountId}#${endpointId}`;

/** The additional authenticated data of an endpoint's secrets: a ciphertext opens for this endpoint only. */
const secretAad = (accountId: number, endpointId: number) => `tillgate webhook signing secret ${accountId}/${endpointId}`;

/** The envelope of the signing secrets: one per execution environment, with its data-key caches. */
export const secretEnvelope = envelope(() => providerFromEnvironment('webhookSecrets'));

/** The secret encrypted for storage in the endpoint's item. */
export function sealSecret(accountId: number, endpointId: number, secret: string): Promise<Sealed> {
  return secretEnvelope.seal(Buffer.from(secret, 'utf8'), secretAad(accountId, endpointId));
}

export function putSecret(accountId: number, endpointId: number, sealed: Sealed): TransactItem {
  return {
    Put: {
      TableName: TABLE,
      Item: { endpoint_key: endpointKey(accountId, endpointId), secret: sealed },
      ConditionExpression: 'attribute_not_exists(endpoint_key)',
    },
  };
}

/**
 * A new secret, encrypted, for the endpoint. As a rule (`stored: 'sealed'`, the current secret
 * encrypted) the current secret becomes the previous one, for 24 hours, and the one before it is
 * dropped; DynamoDB moves it (`SET previous_secret = secret`), still encrypted. The condition
 * fails on an item still in text, written before encryption and never signed with since (the
 * sender would have encrypted it); the route then rotates it with `stored: 'text'`: the text
 * secrets are dropped rather than moved, so no readable secret outlives the rotation, and the
 * replaced one stops signing at once (it has signed nothing since the upgrade).
 */
export function rotateSecret(accountId: number, endpointId: number, sealed: Sealed, now: Date, stored: 'sealed' | 'text'): TransactItem {
  const moved = stored === 'sealed';
  return {
    Update: {
      TableName: TABLE,
      Key: { endpoint_key: endpointKey(accountId, endpointId) },
      UpdateExpression: moved
        ? 'SET previous_secret = secret, previous_until = :until, secret = :secret'
        : 'SET secret = :secret REMOVE previous_secret, previous_until',
      ConditionExpression: 'attribute_exists(endpoint_key) AND attribute_type(secret, :type)',
      ExpressionAttributeValues: {
        ':secret': sealed,
        ':type': moved ? 'M' : 'S',
        ...(moved ? { ':until': Math.floor(now.getTime() / 1000) + PREVIOUS_SECRET_SECONDS } : {}),
      },
    },
  };
}

export function deleteSecret(accountId: number, endpointId: number): TransactItem {
  return { Delete: { TableName: TABLE, Key: { endpoint_key: endpointKey(accountId, endpointId) } } };
}

/** The secrets that sign a delivery now: the current one, and the previous one within 24 h of a rotation. */
export async function signingSecrets(accountId: number, endpointId: number, now: Date): Promise<string[] | undefined> {
  const { Item } = await documents.send(new GetCommand({ TableName: TABLE, Key: { endpoint_key: endpointKey(accountId, endpointId) }, ConsistentRead: true }));
  if (!Item) return undefined;
  const previousValid = Item.previous_secret !== undefined && Item.previous_until > Math.floor(now.getTime() / 1000);
  const stored: unknown[] = previousValid ? [Item.secret, Item.previous_secret] : [Item.secret];
  if (typeof Item.secret === 'string' || typeof Item.previous_secret === 'string') await migrateLegacy(accountId, endpointId, Item);
  const aad = secretAad(accountId, endpointId);
  return Promise.all(
    stored.map(async (value) => {
      if (typeof value === 'string') return value; // written before encryption: encrypted just now, or by the next read
      if (!isSealed(value)) throw new Error(`The signing secret of endpoint ${accountId}/${endpointId} is neither encrypted nor text`);
      return (await secretEnvelope.open(value, aad)).toString('utf8');
    }),
  );
}

/**
 * Encrypts in place the text secrets of an item written before encryption, on condition that
 * they are still those (a rotation meanwhile wins). Best effort: the delivery is signed whether
 * or not it succeeds, and the next read tries again.
 */
async function migrateLegacy(accountId: number, endpointId: number, item: Record<string, any>): Promise<void> {
  const names = ['secret', 'previous_secret'].filter((name) => typeof item[name] === 'string');
  try {
    const values: Record<string, unknown> = {};
    for (const [i, name] of names.entries()) {
      values[`:sealed${i}`] = await sealSecret(accountId, endpointId, item[name] as string);
      values[`:text${i}`] = item[name];
    }
    await documents.send(
      new UpdateCommand({
        TableName: TABLE,
        Key: { endpoint_key: endpointKey(accountId, endpointId) },
        UpdateExpression: `SET ${names.map((name, i) => `${name} = :sealed${i}`).join(', ')}`,
        ConditionExpression: names.map((name, i) => `${name} = :text${i}`).join(' AND '),
        ExpressionAttributeValues: values,
      }),
    );
    logger.info('webhook signing secrets encrypted in place', { account_id: accountId, endpoint_id: endpointId, attributes: names });
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return;
    logger.warn('webhook signing secrets still in text: encrypting them failed; the next delivery tries again', {
      account_id: accountId,
      endpoint_id: endpointId,
      error_name: (error as Error).name,
    });
  }
}
