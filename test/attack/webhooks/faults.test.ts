import '../../support/webhooks/env.ts';
import '../../support/debug-logs.ts';
import { randomInt } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../../../functions/runtime/config.ts';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call } from '../../support/http.ts';
import { useLocalApi } from '../../support/local-api.ts';
import { startReceiver, type Receiver } from '../../support/webhooks/receiver.ts';
import { useQueueStandIns } from '../../support/webhooks/queue-stand-ins.ts';
import { documents } from '../../../functions/runtime/clients.ts';
import type { DeliveryMessage } from '../../../functions/webhooks/delivery-queue.ts';
import { captureLogs } from '../support.ts';

/**
 * Every line written to stdout, stderr or the console while this file runs (at DEBUG): searched
 * for the secrets the endpoints were given, at the end.
 */
const captured: string[] = [];
const secrets: string[] = [];

/**
 * The stream consumer failing in the middle of a batch, and a stream that hands a batch over
 * twice: every (endpoint, event) delivery exists once, its message may be sent more than once,
 * and the receiver still gets each event once per endpoint (the sender's claim on generation
 * and attempts). The events are synthetic stream records (not in the events table), so no other
 * suite's stream poller sees them; the queue is a stand-in that keeps every message.
 */
const ctx = useLocalApi();
let receiver: Receiver;
const queued = useQueueStandIns();
const { handler: fanOut } = await import('../../../functions/webhooks/fan-out-webhook-events.ts');
const { processMessage } = await import('../../../functions/webhooks/send-webhook-deliveries.ts');

beforeAll(async () => {
  captureLogs(captured);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const seed = Number(process.env.FAULT_SEED ?? randomInt(1, 2 ** 31));
process.stdout.write(`webhook faults: seed ${seed} (replay: FAULT_SEED=${seed})\n`);

function streamRecord(accountId: number, eventId: number, sequence: number, eventName: 'INSERT' | 'REMOVE' = 'INSERT'): DynamoDBRecord {
  const image = {
    account_id: accountId,
    id: eventId,
    type: 'transaction.voided',
    resource_id: `site/${eventId}`,
    created_at: new Date().toISOString(),
    expires_at: 2_000_000_000,
  };
  return {
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: {
      SequenceNumber: String(sequence).padStart(21, '0'),
      Keys: marshall({ account_id: accountId, id: eventId }) as Record<string, any>,
      ...(eventName === 'INSERT'
        ? { NewImage: marshall(image) as Record<string, AttributeValue> as Record<string, any> }
        : { OldImage: marshall(image) as Record<string, any> }),
    },
  };
}

describe('the fan-out failing mid-batch', () => {
  it('loses nothing and duplicates nothing beyond at-least-once', async () => {
    const paths = ['/faults/a', '/faults/b'];
    const endpoints: number[] = [];
    for (const path of paths) {
      const created = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', {
        token: ctx.account.token,
        body: { webhook_endpoint: { url: `${receiver.url}${path}`, event_types: ['transaction.voided'] } },
      });
      expect(created.status).toBe(201);
      receiver.secrets(path, [created.json.webhook_endpoint.secret]);
      secrets.push(created.json.webhook_endpoint.secret);
      endpoints.push(created.json.webhook_endpoint.id);
    }
    const base = 1_000_000_000 + (seed % 1_000_000) * 100;
    const ids = Array.from({ length: 6 }, (_, i) => base + i);
    // An acknowledgement (REMOVE) in the middle does nothing.
    const records = [
      ...ids.slice(0, 3).map((id, i) => streamRecord(ctx.account.accountId, id, i + 1)),
      streamRecord(ctx.account.accountId, ids[0]!, 4, 'REMOVE'),
      ...ids.slice(3).map((id, i) => streamRecord(ctx.account.accountId, id, i + 5)),
    ];
    const failing = ids[1 + (seed % 4)]!;

    // The delivery write of one event fails once, after the deliveries before it were written.
    const send = documents.send.bind(documents);
    let injected = false;
    const fault = vi.spyOn(documents, 'send').mockImplementation((async (command: unknown, options?: unknown) => {
      if (!injected && command instanceof PutCommand && command.input.Item?.event_id === failing) {
        injected = true;
        throw Object.assign(new Error('injected fault'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } });
      }
      return send(command as never, options as never);
    }) as never);

    const first = await fanOut({ Records: records } satisfies DynamoDBStreamEvent);
    const failedAt = records.find((r) => r.dynamodb?.NewImage && Number(r.dynamodb.NewImage.id!.N) === failing)!;
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: failedAt.dynamodb!.SequenceNumber }]);
    // Lambda retries from the failed record, the ones after it included; then the whole batch
    // once more (a retry after a time-out that hid the success).
    const retried = await fanOut({ Records: records.slice(records.indexOf(failedAt)) });
    expect(retried.batchItemFailures).toEqual([]);
    expect((await fanOut({ Records: records })).batchItemFailures).toEqual([]);
    fault.mockRestore();

    for (const id of endpoints) {
      const list = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${id}/deliveries`, { token: ctx.account.token });
      expect(list.json.deliveries.map((d: any) => [d.event_id, d.status, d.attempts])).toEqual(ids.map((eventId) => [eventId, 'pending', 0]));
    }
    const messages = queued.map((m) => JSON.parse(m.body) as DeliveryMessage).filter((m) => m.account_id === ctx.account.accountId);
    const keys = messages.map((m) => `${m.endpoint_id}/${m.event_id}`);
    expect(new Set(keys).size).toBe(endpoints.length * ids.length);
    expect(keys.length).toBeGreaterThan(new Set(keys).size); // duplicates were sent to the queue …

    // … and every copy is processed, concurrently, as a queue would hand them out.
    await Promise.all(messages.map((message) => processMessage(message)));
    for (const path of paths) {
      const got = receiver.on(path);
      expect(got.map((r) => Number(r.headers['webhook-id'])).sort((a, b) => a - b)).toEqual(ids);
      expect(got.every((r) => r.verifiedWith.length === 1)).toBe(true);
    }
    for (const id of endpoints) {
      const list = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${id}/deliveries`, { token: ctx.account.token });
      expect(list.json.deliveries.map((d: any) => [d.status, d.attempts])).toEqual(ids.map(() => ['succeeded', 1]));
    }
  });
});

const failingSince = (accountId: number, id: number, since: Date) =>
  documents.send(
    new UpdateCommand({
      TableName: tableName('webhookEndpoints'),
      Key: { account_id: accountId, id },
      UpdateExpression: 'SET failing_since = :since',
      ExpressionAttributeValues: { ':since': since.toISOString() },
    }),
  );

describe("a failing origin's lanes", () => {
  it('sends new attempts through lane 0, and moves a backlog queued in other lanes to lane 0 unsent, where it is sent once', async () => {
    const path = '/faults/lanes';
    const created = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', {
      token: ctx.account.token,
      body: { webhook_endpoint: { url: `${receiver.url}${path}` } },
    });
    expect(created.status).toBe(201);
    secrets.push(created.json.webhook_endpoint.secret);
    receiver.secrets(path, [created.json.webhook_endpoint.secret]);
    const id = created.json.webhook_endpoint.id as number;
    await failingSince(ctx.account.accountId, id, new Date(Date.now() - 60_000));
    const eventId = 4_000_000_000 + (seed % 1_000_000) * 4 + 3; // lane 3 were the endpoint healthy
    queued.length = 0;
    await fanOut({ Records: [streamRecord(ctx.account.accountId, eventId, 1)] });
    const [fresh] = queued.map((m) => JSON.parse(m.body) as DeliveryMessage).filter((m) => m.endpoint_id === id);
    expect(fresh).toMatchObject({ lane: 0, attempts: 0, generation: 1 });

    // The same attempt as it would wait in lane 3 had it been queued while the endpoint was healthy.
    queued.length = 0;
    await processMessage({ ...fresh!, lane: 3 });
    expect(receiver.on(path)).toHaveLength(0);
    const moved = queued.map((m) => ({ ...m, message: JSON.parse(m.body) as DeliveryMessage }));
    expect(moved.map((m) => [m.message.lane, m.message.attempts, m.message.generation])).toEqual([[0, 0, 1]]);
    expect(moved[0]!.groupId?.endsWith('-0')).toBe(true);
    await processMessage(moved[0]!.message);
    await processMessage(moved[0]!.message); // a second copy sends nothing
    expect(receiver.on(path)).toHaveLength(1);
    const list = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${id}/deliveries`, { token: ctx.account.token });
    expect(list.json.deliveries.map((d: any) => [d.event_id, d.status, d.attempts])).toEqual([[eventId, 'succeeded', 1]]);
  });
});

describe('five days of failures', () => {
  it('disable an endpoint whose every attempt has failed for five days; a success before that ends the streak', async () => {
    const make = async (path: string) => {
      const created = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', {
        token: ctx.account.token,
        body: { webhook_endpoint: { url: `${receiver.url}${path}` } },
      });
      secrets.push(created.json.webhook_endpoint.secret);
      return created.json.webhook_endpoint.id as number;
    };
    const dying = await make('/faults/dying');
    const recovering = await make('/faults/recovering');
    receiver.behave('/faults/dying', { status: 503 });
    const day = 86_400_000;
    await failingSince(ctx.account.accountId, dying, new Date(Date.now() - 5 * day - 1000));
    await failingSince(ctx.account.accountId, recovering, new Date(Date.now() - 4 * day));
    queued.length = 0;
    await fanOut({ Records: [streamRecord(ctx.account.accountId, 3_000_000_000 + (seed % 1_000_000), 1)] });
    await Promise.all(queued.map((m) => processMessage(JSON.parse(m.body))));

    const read = async (id: number) =>
      (await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${id}`, { token: ctx.account.token })).json.webhook_endpoint;
    expect((await read(dying)).status).toBe('disabled');
    expect((await read(recovering)).status).toBe('enabled');
    const item = await documents.send(new GetCommand({ TableName: tableName('webhookEndpoints'), Key: { account_id: ctx.account.accountId, id: recovering } }));
    expect(item.Item?.failing_since).toBeUndefined();
    // A 503 is retried, but the endpoint is disabled now: the retry ends the delivery without a request.
    const retries = queued.map((m) => JSON.parse(m.body) as DeliveryMessage).filter((m) => m.endpoint_id === dying && m.attempts === 1);
    expect(retries).toHaveLength(1);
    await processMessage({ ...retries[0]!, due_at: Date.now() });
    expect(receiver.on('/faults/dying')).toHaveLength(1);
    const list = await call(ctx.api, 'core', 'GET', `/v1.0/webhook_endpoints/${dying}/deliveries`, { token: ctx.account.token });
    expect(list.json.deliveries[0]).toMatchObject({ status: 'failed', attempts: 1, last_response_status: 503, next_attempt_at: null });
  });
});

describe('secrets in logs', () => {
  it('never appear in a log line: creation, rotation, signed deliveries, failed attempts and faults logged at DEBUG', async () => {
    const path = '/faults/logs';
    const created = await call(ctx.api, 'core', 'POST', '/v1.0/webhook_endpoints', {
      token: ctx.account.token,
      body: { webhook_endpoint: { url: `${receiver.url}${path}?token=receiver-credential-123` } },
    });
    const id = created.json.webhook_endpoint.id;
    const rotated = await call(ctx.api, 'core', 'POST', `/v1.0/webhook_endpoints/${id}/rotate_secret`, { token: ctx.account.token });
    secrets.push(created.json.webhook_endpoint.secret, rotated.json.webhook_endpoint.secret);
    receiver.behave(`${path}?token=receiver-credential-123`, { status: 500 });
    const eventId = 2_000_000_000 + (seed % 1_000_000);
    queued.length = 0;
    await fanOut({ Records: [streamRecord(ctx.account.accountId, eventId, 1)] });
    await Promise.all(queued.map((m) => processMessage(JSON.parse(m.body))));
    expect(receiver.on(`${path}?token=receiver-credential-123`)).toHaveLength(1);
    // A database fault on the sender's path: logged as an error, with its name and message only.
    const send = documents.send.bind(documents);
    const fault = vi.spyOn(documents, 'send').mockImplementation((async () => {
      throw Object.assign(new Error('injected'), { name: 'InternalServerError' });
    }) as never);
    const { handler: sender } = await import('../../../functions/webhooks/send-webhook-deliveries.ts');
    const due = JSON.stringify({ ...(JSON.parse(queued.at(-1)!.body) as DeliveryMessage), due_at: Date.now() });
    const failed = await sender({ Records: [{ messageId: 'm1', body: due } as never] });
    fault.mockRestore();
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    void send;

    const everything = captured.join('\n');
    expect(everything).toContain('webhook attempt');
    expect(everything).toContain('webhook message failed');
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    for (const secret of secrets) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice('whsec_'.length));
    }
    expect(everything).not.toContain('receiver-credential-123');
    expect(everything).not.toContain('v1,');
  });
});
