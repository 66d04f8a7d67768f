import { createServer } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as lib from '@aws-sdk/lib-dynamodb';
import { httpInput, replayer, type Plan } from '../replay.ts';
import { serveCpuUsage } from './cpu.ts';

/**
 * The HTTP baseline: a bare node:http server that makes, for every request, the DynamoDB calls
 * tillgate made for the same scenario (replayed through a DynamoDBDocumentClient, see replay.ts)
 * and answers with tillgate's recorded answer. The runner sends the plan of the scenario about to
 * be measured (`{type: 'plan', plan}`) before each run.
 */
const endpoint = process.env.DYNAMODB_ENDPOINT;
const documents = lib.DynamoDBDocumentClient.from(new DynamoDBClient(endpoint ? { endpoint } : {}), {
  marshallOptions: { removeUndefinedValues: true },
});
const commands = lib as unknown as Record<string, new (input: any) => unknown>;
let replay: ReturnType<typeof replayer> | undefined;

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const input = httpInput(
      url.pathname,
      Object.fromEntries(url.searchParams),
      request.headers as Record<string, string>,
      Buffer.concat(chunks).toString('utf8'),
    );
    replay!(input).then(
      (answer) => {
        response.writeHead(answer.statusCode, { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) });
        response.end(answer.body);
      },
      (error) => {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(String(error));
      },
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  serveCpuUsage({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` }, (message) => {
    if (message?.type === 'plan') {
      replay = replayer(message.plan as Plan, commands, (command) => documents.send(command));
      process.send!({ type: 'plan-set' });
    }
  });
});
