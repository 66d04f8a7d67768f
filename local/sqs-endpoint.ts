import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { queueIds, queues as queueSpecs, type QueueId } from '../functions/queues.ts';
import type { QueuedMessage } from '../functions/runtime/queue-client.ts';
import type { LocalQueue } from './sqs-queue.ts';

/**
 * An SQS endpoint on 127.0.0.1 for the local stack: the functions send to it through
 * @aws-sdk/client-sqs exactly as they send to SQS in AWS (SQS_ENDPOINT and the queue URLs of
 * functions/queues.ts in the environment), and it hands each message to the local queue of its
 * URL (sqs-queue.ts), which drives the worker. It speaks the AWS JSON 1.0 protocol of the SDK for
 * the two actions the functions use, SendMessage and SendMessageBatch (an entry its queue refuses
 * is a `Failed` entry, as SQS reports it); anything else is refused with
 * `UnsupportedOperation`. No authentication: it listens on 127.0.0.1 only.
 */
export interface LocalSqsEndpoint {
  readonly endpoint: string;
  readonly queueUrls: Record<QueueId, string>;
  /** What the functions read to find the queues: SQS_ENDPOINT and each queue's URL variable. */
  readonly environment: Record<string, string>;
  close(): Promise<void>;
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

export async function startSqsEndpoint(queues: Record<QueueId, LocalQueue>, options: { port?: number } = {}): Promise<LocalSqsEndpoint> {
  const byName = new Map<string, QueueId>(queueIds.map((id) => [`${id}${queueSpecs[id].fifo ? '.fifo' : ''}`, id]));
  const server = createServer((request, response) => {
    answer(request, response).catch((error) => reply(response, 500, { __type: 'com.amazonaws.sqs#InternalError', message: String(error) }));
  });

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const action = String(request.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, any>;
    const queueId = byName.get(
      String(input.QueueUrl ?? '')
        .split('/')
        .at(-1) ?? '',
    );
    if (action !== 'SendMessage' && action !== 'SendMessageBatch') {
      return reply(response, 400, {
        __type: 'com.amazonaws.sqs#UnsupportedOperation',
        message: `The local SQS endpoint does not serve ${action || 'this request'}`,
      });
    }
    if (!queueId) return reply(response, 400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: `No local queue at ${input.QueueUrl}` });
    const entries: Record<string, any>[] = action === 'SendMessage' ? [{ ...input, Id: '0' }] : (input.Entries ?? []);
    const successful: Record<string, string>[] = [];
    const failed: Record<string, unknown>[] = [];
    for (const entry of entries) {
      const message: QueuedMessage = {
        body: String(entry.MessageBody ?? ''),
        ...(entry.DelaySeconds !== undefined ? { delaySeconds: Number(entry.DelaySeconds) } : {}),
        ...(entry.MessageGroupId !== undefined ? { groupId: String(entry.MessageGroupId) } : {}),
        ...(entry.MessageDeduplicationId !== undefined ? { deduplicationId: String(entry.MessageDeduplicationId) } : {}),
      };
      try {
        await queues[queueId].send([message]);
        successful.push({ Id: String(entry.Id), MessageId: randomUUID(), MD5OfMessageBody: md5(message.body) });
      } catch (error) {
        failed.push({ Id: String(entry.Id), Code: 'InvalidParameterValue', Message: (error as Error).message, SenderFault: true });
      }
    }
    if (action === 'SendMessageBatch') return reply(response, 200, { Successful: successful, Failed: failed });
    if (failed.length > 0) return reply(response, 400, { __type: 'com.amazonaws.sqs#InvalidParameterValue', message: failed[0]!.Message });
    return reply(response, 200, { MessageId: successful[0]!.MessageId, MD5OfMessageBody: successful[0]!.MD5OfMessageBody });
  }

  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => done());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const queueUrls = Object.fromEntries([...byName].map(([name, id]) => [id, `${endpoint}/000000000000/${name}`])) as Record<QueueId, string>;
  return {
    endpoint,
    queueUrls,
    environment: { SQS_ENDPOINT: endpoint, ...Object.fromEntries(queueIds.map((id) => [queueSpecs[id].envVar, queueUrls[id]])) },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': String(Buffer.byteLength(payload)),
    'x-amzn-RequestId': randomUUID(),
  });
  response.end(payload);
}
