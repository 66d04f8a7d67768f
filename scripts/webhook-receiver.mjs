#!/usr/bin/env node
// A webhook receiver for trying tillgate's deliveries on your own machine (README, "A day in the
// life"): listens on 127.0.0.1, verifies each delivery with the Standard Webhooks library and
// the endpoint's secret (WHSEC), prints one line per delivery and answers 204 (400 when the
// signature does not verify, so tillgate retries). Plain JavaScript, no build: run it with
//   WHSEC=whsec_… node scripts/webhook-receiver.mjs [--port 4000] [--count N] [--timeout SECONDS]
// With --count it exits (0) after N verified deliveries. It has no time-out of its own, so a
// reader who takes their time loses nothing: it waits until it has them or is stopped (Ctrl-C,
// `kill`), saying how many it got. Only --timeout, when given, makes it give up (1) after that many
// seconds. The port is yours to choose (`--port`): nothing in tillgate's own settings names it.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

const { values } = parseArgs({ options: { port: { type: 'string', default: '4000' }, count: { type: 'string' }, timeout: { type: 'string' } } });
if (!process.env.WHSEC?.startsWith('whsec_')) {
  console.error('webhook-receiver: set WHSEC to the secret the endpoint was created with (whsec_…)');
  process.exit(2);
}
const webhook = new Webhook(process.env.WHSEC);
const wanted = values.count === undefined ? Infinity : Number(values.count);
let verified = 0;

const server = createServer((request, response) => {
  const chunks = [];
  request
    .on('data', (chunk) => chunks.push(chunk))
    .on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const payload = webhook.verify(body, request.headers);
        console.log(`verified webhook-id ${request.headers['webhook-id']}: ${payload.type} ${payload.data.resource_id}`);
        response.writeHead(204).end();
        if (++verified >= wanted) server.close(() => process.exit(0));
      } catch (error) {
        console.log(`rejected webhook-id ${request.headers['webhook-id']}: ${error.message}`);
        response.writeHead(400).end();
      }
    });
});
server.listen(Number(values.port), '127.0.0.1');
const got = () => `${verified}${wanted === Infinity ? '' : ` of ${wanted}`} deliveries`;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`webhook-receiver: stopped (${signal}) with ${got()}`);
    process.exit(wanted === Infinity || verified >= wanted ? 0 : 1);
  });
}
if (values.timeout !== undefined) {
  setTimeout(() => {
    console.error(`webhook-receiver: ${got()} in ${values.timeout} s (--timeout)`);
    process.exit(1);
  }, Number(values.timeout) * 1000).unref();
}
