import '../../support/webhooks/env.ts';
import '../../support/debug-logs.ts';
import { randomInt } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { tableName } from '../../../functions/runtime/config.ts';
import { documents } from '../../../functions/runtime/clients.ts';
import { KeyUnavailableError } from '../../../functions/runtime/envelope.ts';
import { secretEnvelope } from '../../../functions/data/webhook-secrets.ts';
import type { DeliveryMessage } from '../../../functions/webhooks/delivery-queue.ts';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import { useQueueStandIns } from '../../support/webhooks/queue-stand-ins.ts';
import { captureLogs } from '../support.ts';

/**
 * Signing secrets at rest (PRODUCT.md, "Webhooks", "Secrets at rest"; docs/security.md, "Signing
 * secrets at rest"): what a role that can read the secrets table, or a backup of it, gets. Endpoints
 * are made and rotated through the API, deliveries made by the fan-out and sent by the sender
 * (called directly, as faults.test.ts does), against DynamoDB Local with the local key.
 */
const ctx = useLocalApi();
let receiver: Receiver;
const queued = useQueueStandIns();
const captured: string[] = [];
const { handler: fanOut } = await import('../../../functions/webhooks/fan-out-webhook-events.ts');
const { processMessage } = await import('../../../functions/webhooks/send-webhook-deliveries.ts');
const SECRETS = tableName('webhookSecrets');

const seed = Number(process.env.FAULT_SEED ?? randomInt(1, 2 ** 31));
process.stdout.write(`secrets at rest: seed ${seed} (replay: FAULT_SEED=${seed})\n`);
let nextEvent = 5_000_000_000 + (seed % 1_000_000) * 100;

// A test that fails before its own mockRestore must not leave its spy for the next one (whose
// spy would then wrap it and call itself: a RangeError that hides the first failure).
// (Not vi.restoreAllMocks: it would also undo the log capture of captureLogs.)
const spies: { mockRestore(): void }[] = [];
afterEach(() => spies.splice(0).forEach((spy) => spy.mockRestore()));

beforeAll(async () => {
  captureLogs(captured);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

async function createEndpoint(path: string): Promise<{ id: number; secret: string }> {
  const created = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', {
    token: ctx.account.token,
    body: { webhook_endpoint: { url: `${receiver.url}${path}`, event_types: ['transaction.voided'] } },
  });
  expect(created.status).toBe(201);
  return { id: created.json.webhook_endpoint.id, secret: created.json.webhook_endpoint.secret };
}

async function rotate(id: number): Promise<string> {
  const rotated = await call(ctx.api, 'core', 'POST', `/v1.0/webhook_endpoints/${id}/rotate_secret`, { token: ctx.account.token });
  expect(rotated.status).toBe(200);
  return rotated.json.webhook_endpoint.secret;
}

function streamRecord(accountId: number, eventId: number): DynamoDBRecord {
  const image = {
    account_id: accountId,
    id: eventId,
    type: 'transaction.voided',
    resource_id: `site/${eventId}`,
    created_at: new Date().toISOString(),
    expires_at: 2_000_000_000,
  };
  return {
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      SequenceNumber: String(eventId).padStart(21, '0'),
      Keys: marshall({ account_id: accountId, id: eventId }) as Record<string, any>,
      NewImage: marshall(image) as Record<string, AttributeValue> as Record<string, any>,
    },
  };
}

/** One event fanned out to the account's endpoints: the messages the sender gets. */
async function fanOutOne(): Promise<DeliveryMessage[]> {
  queued.length = 0;
  const result = await fanOut({ Records: [streamRecord(ctx.account.accountId, nextEvent++)] });
  expect(result.batchItemFailures).toEqual([]);
  return queued.map((m) => JSON.parse(m.body) as DeliveryMessage);
}

const itemOf = async (id: number) =>
  (await documents.send(new GetCommand({ TableName: SECRETS, Key: { endpoint_key: `${ctx.account.accountId}#${id}` }, ConsistentRead: true }))).Item!;

/** Every string and byte string of a value, however deep (maps and lists of DynamoDB items). */
function leaves(value: unknown): (string | Uint8Array)[] {
  if (typeof value === 'string' || value instanceof Uint8Array) return [value];
  if (Array.isArray(value) || value instanceof Set) return [...value].flatMap(leaves);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(leaves);
  return [];
}

/** Whether `candidate`, taken as a signing secret in any form a thief might try, verifies the delivery. */
function verifies(candidate: string | Uint8Array, delivery: { body: string; headers: Record<string, string> }): boolean {
  const forms: (string | Uint8Array)[] =
    typeof candidate === 'string'
      ? [candidate, Buffer.from(candidate, 'base64'), Buffer.from(candidate, 'utf8')]
      : [candidate, ...leaves(Buffer.from(candidate).toString('base64'))];
  return forms.some((form) => {
    try {
      new Webhook(form as string).verify(delivery.body, delivery.headers);
      return true;
    } catch {
      return false;
    }
  });
}

describe('a scan of the secrets table', () => {
  it('after creating and rotating endpoints and delivering to them, holds no whsec_, and no value that verifies a delivery signature', async () => {
    const paths = ['/at-rest/a', '/at-rest/b', '/at-rest/c'];
    const endpoints = await Promise.all(paths.map((path) => createEndpoint(path)));
    const secrets = endpoints.map((e) => [e.secret]);
    // b rotated once (two signatures for a day), c twice.
    secrets[1]!.unshift(await rotate(endpoints[1]!.id));
    secrets[2]!.unshift(await rotate(endpoints[2]!.id));
    secrets[2]!.unshift(await rotate(endpoints[2]!.id));
    paths.forEach((path, i) => receiver.secrets(path, secrets[i]!));
    await Promise.all((await fanOutOne()).map((message) => processMessage(message)));
    const deliveries = paths.map((path) => receiver.on(path)[0]!);
    // The deliveries verify with standardwebhooks under what the API showed: current and previous.
    expect(deliveries.map((d) => d.verifiedWith.length)).toEqual([1, 2, 2]);

    const { Items } = await documents.send(new ScanCommand({ TableName: SECRETS, ConsistentRead: true }));
    const ours = Items!.filter((item) => String(item.endpoint_key).startsWith(`${ctx.account.accountId}#`));
    expect(ours).toHaveLength(3);
    const text = JSON.stringify(ours, (_, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v));
    expect(text).not.toContain('whsec_');
    for (const list of secrets) for (const secret of list) expect(text).not.toContain(secret.slice('whsec_'.length, 'whsec_'.length + 16));
    // Every leaf of every item of the scan (this account's and every other test's), as text, base64 or bytes: none signs.
    const candidates = Items!.flatMap(leaves);
    expect(candidates.length).toBeGreaterThanOrEqual(3 * 5);
    for (const delivery of deliveries) for (const candidate of candidates) expect(verifies(candidate, delivery)).toBe(false);
    // The check can fail: the secret itself, stored as it was before, would be found.
    expect(verifies(secrets[0]![0]!, deliveries[0]!)).toBe(true);
    // c's twice-replaced secret is gone; the once-replaced one is stored encrypted beside the current one.
    const c = await itemOf(endpoints[2]!.id);
    expect(Object.keys(c).sort()).toEqual(['endpoint_key', 'previous_secret', 'previous_until', 'secret']);
    expect(Object.keys(c.secret).sort()).toEqual(['data', 'iv', 'key', 'v']);
  });
});

describe('a ciphertext copied to another endpoint', () => {
  it('does not open there: the copy signs nothing, the message is retried, and the attempt is not lost', async () => {
    const victim = await createEndpoint('/at-rest/victim');
    const attacker = await createEndpoint('/at-rest/attacker');
    receiver.secrets('/at-rest/attacker', [victim.secret, attacker.secret]);
    // Someone who can write the table moves the victim's ciphertext into the attacker's item.
    const own = (await itemOf(attacker.id)).secret;
    const moveIn = (secret: unknown) =>
      documents.send(
        new UpdateCommand({
          TableName: SECRETS,
          Key: { endpoint_key: `${ctx.account.accountId}#${attacker.id}` },
          UpdateExpression: 'SET secret = :s',
          ExpressionAttributeValues: { ':s': secret },
        }),
      );
    await moveIn((await itemOf(victim.id)).secret);
    const message = (await fanOutOne()).find((m) => m.endpoint_id === attacker.id)!;
    await expect(processMessage(message)).rejects.toMatchObject({ name: 'SealedValueUnreadableError' });
    expect(receiver.on('/at-rest/attacker')).toEqual([]);
    // The claim was released: with the item's own ciphertext back, the same message sends, signed with it.
    await moveIn(own);
    await processMessage(message);
    const got = receiver.on('/at-rest/attacker');
    expect(got).toHaveLength(1);
    expect(got[0]!.verifiedWith).toEqual([attacker.secret]);
  });
});

describe('the data key cache', () => {
  it('makes N deliveries to an endpoint cost at most one Decrypt, concurrent ones included', async () => {
    const endpoint = await createEndpoint('/at-rest/cached');
    receiver.secrets('/at-rest/cached', [endpoint.secret]);
    secretEnvelope.forget(); // as a fresh execution environment of the sender
    const decrypt = vi.spyOn(secretEnvelope.provider, 'decrypt');
    const generate = vi.spyOn(secretEnvelope.provider, 'generateDataKey');
    spies.push(decrypt, generate);
    const n = 12;
    const messages: DeliveryMessage[] = [];
    for (let i = 0; i < n; i++) messages.push(...(await fanOutOne()).filter((m) => m.endpoint_id === endpoint.id));
    queued.length = 0;
    await Promise.all(messages.slice(0, n / 2).map((m) => processMessage(m)));
    for (const m of messages.slice(n / 2)) await processMessage(m);
    // A message in a lane the endpoint has not earned is moved unsent to one it has (fair lanes,
    // docs/webhooks.md): deliver the moved copies too, as the queue would.
    for (let round = 0; round < 5 && queued.length > 0; round++) {
      const moved = queued.splice(0).map((m) => JSON.parse(m.body) as DeliveryMessage);
      for (const m of moved) await processMessage(m);
    }
    const got = receiver.on('/at-rest/cached');
    expect(got).toHaveLength(n);
    expect(got.every((d) => d.verifiedWith.length === 1)).toBe(true);
    expect(decrypt.mock.calls.length).toBeLessThanOrEqual(1);
    expect(decrypt).toHaveBeenCalledTimes(1); // and the count can move: the first delivery did decrypt
    expect(generate).not.toHaveBeenCalled();
    decrypt.mockRestore();
    generate.mockRestore();
  });
});

describe('KMS failing', () => {
  it('returns the message to the queue with its claim released; the retry delivers it; no log line holds secret material', async () => {
    const endpoint = await createEndpoint('/at-rest/kms-down');
    receiver.secrets('/at-rest/kms-down', [endpoint.secret]);
    const message = (await fanOutOne()).find((m) => m.endpoint_id === endpoint.id)!;
    secretEnvelope.forget();
    const opened: Buffer[] = [];
    const decrypt = secretEnvelope.provider.decrypt.bind(secretEnvelope.provider);
    const fault = vi
      .spyOn(secretEnvelope.provider, 'decrypt')
      .mockImplementationOnce(() => Promise.reject(new KeyUnavailableError('KMS Decrypt failed (ThrottlingException)')))
      .mockImplementation(async (blob) => {
        const key = await decrypt(blob);
        opened.push(key);
        return key;
      });
    spies.push(fault);
    const { handler: sender } = await import('../../../functions/webhooks/send-webhook-deliveries.ts');
    const record = { messageId: 'kms-1', body: JSON.stringify(message) } as never;
    const first = await sender({ Records: [record] });
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'kms-1' }]);
    expect(receiver.on('/at-rest/kms-down')).toEqual([]);
    const pending = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${endpoint.id}/deliveries`, { token: ctx.account.token });
    expect(pending.json.deliveries.map((d: any) => [d.status, d.attempts])).toEqual([['pending', 0]]);
    // SQS hands the same message over again, long before the lease would end.
    const second = await sender({ Records: [record] });
    expect(second.batchItemFailures).toEqual([]);
    expect(fault).toHaveBeenCalledTimes(2);
    const got = receiver.on('/at-rest/kms-down');
    expect(got).toHaveLength(1);
    expect(got[0]!.verifiedWith).toEqual([endpoint.secret]);
    const list = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${endpoint.id}/deliveries`, { token: ctx.account.token });
    expect(list.json.deliveries.map((d: any) => [d.status, d.attempts])).toEqual([['succeeded', 1]]);

    fault.mockRestore();
    const everything = captured.join('\n');
    expect(everything).toContain('KeyUnavailableError');
    expect(everything).not.toContain(endpoint.secret.slice('whsec_'.length, 'whsec_'.length + 16));
    expect(opened).toHaveLength(1);
    for (const key of opened) {
      expect(everything).not.toContain(key.toString('base64'));
      expect(everything).not.toContain(key.toString('hex'));
    }
  });
});

describe('secrets stored in text before encryption (an existing stage)', () => {
  const legacy = (secret: string, previous?: string) => ({
    endpoint_key: '',
    secret,
    ...(previous ? { previous_secret: previous, previous_until: Math.floor(Date.now() / 1000) + 3600 } : {}),
  });

  it('are encrypted in place by the first delivery, which still verifies under both', async () => {
    const endpoint = await createEndpoint('/at-rest/legacy');
    const previous = `whsec_${Buffer.from('an older secret of 24 bytes!').toString('base64')}`;
    const key = `${ctx.account.accountId}#${endpoint.id}`;
    await documents.send(new PutCommand({ TableName: SECRETS, Item: { ...legacy(endpoint.secret, previous), endpoint_key: key } }));
    receiver.secrets('/at-rest/legacy', [endpoint.secret, previous]);
    const message = (await fanOutOne()).find((m) => m.endpoint_id === endpoint.id)!;
    await processMessage(message);
    expect(receiver.on('/at-rest/legacy')[0]!.verifiedWith).toEqual([endpoint.secret, previous]);
    const item = await itemOf(endpoint.id);
    expect(JSON.stringify(item)).not.toContain('whsec_');
    expect(Object.keys(item.secret).sort()).toEqual(['data', 'iv', 'key', 'v']);
    expect(Object.keys(item.previous_secret).sort()).toEqual(['data', 'iv', 'key', 'v']);
    // And they keep signing, now from the ciphertext.
    await processMessage((await fanOutOne()).find((m) => m.endpoint_id === endpoint.id)!);
    expect(receiver.on('/at-rest/legacy')[1]!.verifiedWith).toEqual([endpoint.secret, previous]);
  });

  it('are dropped, never moved, by a rotation that comes first', async () => {
    const endpoint = await createEndpoint('/at-rest/legacy-rotated');
    const previous = `whsec_${Buffer.from('a replaced secret, 24 byte').toString('base64')}`;
    await documents.send(
      new PutCommand({ TableName: SECRETS, Item: { ...legacy(endpoint.secret, previous), endpoint_key: `${ctx.account.accountId}#${endpoint.id}` } }),
    );
    const fresh = await rotate(endpoint.id);
    const item = await itemOf(endpoint.id);
    expect(JSON.stringify(item)).not.toContain('whsec_');
    expect(Object.keys(item).sort()).toEqual(['endpoint_key', 'secret']);
    receiver.secrets('/at-rest/legacy-rotated', [fresh, endpoint.secret]);
    await processMessage((await fanOutOne()).find((m) => m.endpoint_id === endpoint.id)!);
    expect(receiver.on('/at-rest/legacy-rotated')[0]!.verifiedWith).toEqual([fresh]);
  });
});
