// A stand-in for the Lambda runtime's first invocation: load the bundle (the init phase), call
// its handler once with the event, report the result on file descriptor 3 and exit. Plain
// JavaScript on purpose: nothing is loaded before the bundle but what Node itself loads.
import { writeSync } from 'node:fs';

const [bundle] = process.argv.slice(2);
const event = JSON.parse(process.env.BENCH_EVENT);
delete process.env.BENCH_EVENT;
const context = {
  awsRequestId: 'bench-cold-start',
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:bench',
  memoryLimitInMB: '1024',
  logGroupName: '/aws/lambda/bench',
  logStreamName: 'bench',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};
const { handler } = await import(bundle);
const result = await handler(event, context);
writeSync(3, `${JSON.stringify({ statusCode: result.statusCode })}\n`);
process.exit(0);
