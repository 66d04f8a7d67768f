/**
 * Where the warm middleware chain's time goes: each piece of the chain timed on its own, in µs
 * per invocation (median of 25 batches of 2,000 calls), with production settings (INFO logs to
 * stdout, EMF metrics enabled). Manual timing, no profiler: the figures are what one call of each
 * piece costs, so they can be compared with the chain's overhead in `npm run bench`.
 *
 * `node --import tsx scripts/bench/warm-profile.ts > /dev/null` (results on stderr).
 */
export {};

process.env.POWERTOOLS_LOG_LEVEL ??= 'INFO';
delete process.env.POWERTOOLS_METRICS_DISABLED;
process.env.POWERTOOLS_METRICS_NAMESPACE ??= 'Tillgate';
process.env.AWS_REGION ??= 'local';

const { logger, metrics, recordRequestMetrics } = await import('../../functions/runtime/observability.ts');
const { injectLambdaContext } = await import('@aws-lambda-powertools/logger/middleware');
const { logMetrics } = await import('@aws-lambda-powertools/metrics/middleware');
const { default: httpSecurityHeaders } = await import('@middy/http-security-headers');
const { default: httpHeaderNormalizer } = await import('@middy/http-header-normalizer');
const { weakEtag } = await import('../../functions/http/etags.ts');
const { checkBody } = await import('../../functions/http/validation.ts');
const { validators } = await import('../../functions/http/schemas/all.generated.ts');
const { default: middy } = await import('@middy/core');

const context = {
  awsRequestId: 'c0ffee00-0000-4000-8000-000000000000',
  functionName: 'getEvent',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:000000000000:function:getEvent',
  memoryLimitInMB: '1024',
  logGroupName: '/aws/lambda/getEvent',
  logStreamName: 'stream',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 10_000,
};
const headers = {
  'X-Auth-Token': 'tg_live_abcdefghijklmnopqrstuvwxyz0123456789',
  'Content-Type': 'application/json',
  Accept: '*/*',
  'User-Agent': 'pos/9.4',
  Host: 'api.example.com',
  'X-Forwarded-For': '203.0.113.9',
  'X-Amzn-Trace-Id': 'Root=1-5f84c7a9-1234567890abcdef12345678',
};
const event = () => ({
  httpMethod: 'GET',
  path: '/v1.0/events/123',
  headers: { ...headers },
  multiValueHeaders: {},
  requestContext: { identity: { sourceIp: '203.0.113.9' } },
});
const eventBody = {
  event: { id: 123456, type: 'transaction.voided', resource_id: '[4242,"bench-site","T-abc"]', created_at: '2026-11-22T10:20:30.123Z', account_id: 4242 },
};
const page = {
  events: Array.from({ length: 100 }, (_, i) => ({ ...eventBody.event, id: 123456 + i })),
  next_cursor: 'eyJ2IjoxLCJhIjo0MjQyLCJmIjoiZXZlbnRzIiwiYWZ0ZXIiOjEyMzU1NX0',
};
const voidBody = {
  site_id: 'bench-site',
  pos_transaction_id: 'T-1',
  register_id: 'R1',
  operator_id: 'op-7',
  occurred_at: '2025-01-15T10:20:30Z',
  business_date: '2025-01-15',
  posagent_version: '9.4.1',
};
const response = () => ({ statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(eventBody) });
const { securityHeaders } = await import('../../functions/http/security-headers.ts');
const injector = injectLambdaContext(logger, { resetKeys: true }) as any;
const flusher = logMetrics(metrics, { captureColdStartMetric: true }) as any;
const security = httpSecurityHeaders(securityHeaders as never) as any;
const normalizer = httpHeaderNormalizer() as any;
const request = () => ({ event: event(), context: { ...context }, response: response(), error: undefined, internal: {} });
const logFields = {
  request_id: 'c0ffee00',
  operation: 'getEvent',
  method: 'GET',
  path: '/v1.0/events/123',
  status: 200,
  latency_ms: 1.23,
  account_id: 4242,
  source_ip: '203.0.113.9',
};

async function time(name: string, fn: () => unknown): Promise<[string, number]> {
  const batch = 2000;
  const medians: number[] = [];
  for (let i = 0; i < 5; i++) for (let j = 0; j < batch; j++) await fn(); // warm-up
  for (let round = 0; round < 25; round++) {
    const started = performance.now();
    for (let j = 0; j < batch; j++) await fn();
    medians.push(((performance.now() - started) * 1000) / batch);
  }
  medians.sort((a, b) => a - b);
  return [name, medians[12]!];
}

const results: [string, number][] = [];
results.push(await time('Powertools logger: one INFO request line (8 fields + Lambda context)', () => logger.info('request', logFields)));
results.push(
  await time('injectLambdaContext: before + after (addContext, resetKeys)', async () => {
    const r = request();
    await injector.before(r);
    await injector.after(r);
  }),
);
results.push(
  await time('logMetrics: before + 4 metrics + after (EMF document serialised and written), metrics enabled', async () => {
    const r = request();
    await flusher.before(r);
    recordRequestMetrics('getEvent', 200, 1.23);
    await flusher.after(r);
  }),
);
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const { Metrics } = await import('@aws-lambda-powertools/metrics');
const disabled = new Metrics({ namespace: 'Tillgate', serviceName: 'tillgate', defaultDimensions: { stage: 'local' } });
const disabledFlusher = logMetrics(disabled, { captureColdStartMetric: true }) as any;
results.push(
  await time("logMetrics, POWERTOOLS_METRICS_DISABLED=true (as the bench's warm rows)", async () => {
    const r = request();
    await disabledFlusher.before(r);
    disabled.addDimension('operation', 'getEvent');
    disabled.addMetric('Requests', 'Count', 1);
    await disabledFlusher.after(r);
  }),
);
results.push(
  await time('http-security-headers: after', async () => {
    const r = request();
    await security.after(r);
  }),
);
results.push(
  await time('http-header-normalizer: before (7 headers)', async () => {
    const r = request();
    await normalizer.before(r);
  }),
);
const eventJson = JSON.stringify(eventBody);
const pageJson = JSON.stringify(page);
results.push(await time('JSON.stringify: one event body', () => JSON.stringify(eventBody)));
results.push(await time('weak ETag (sha256 of the body): one event', () => weakEtag(eventJson)));
results.push(await time('JSON.stringify: a page of 100 events', () => JSON.stringify(page)));
results.push(await time('weak ETag (sha256 of the body): a page of 100 events', () => weakEtag(pageJson)));
results.push(
  await time('ajv standalone validator + error mapping: a void body', () => checkBody(validators.voidTransaction, structuredClone(voidBody), 'transaction')),
);
results.push(await time('structuredClone of that body (the line above includes it)', () => structuredClone(voidBody)));
const empty = middy(async () => ({ statusCode: 200, body: '' }));
results.push(await time('middy core: a handler with no middleware', () => empty(event() as never, context as never)));

for (const [name, micros] of results) console.error(`${micros.toFixed(2).padStart(8)} µs  ${name}`);
process.exit(0);
