/**
 * Imported first by load tests, before anything creates the DynamoDB client: DynamoDB Local on a
 * shared two-core machine can take seconds for a 100-item transaction when twenty callers write
 * at once, and accept new connections slowly; the production timeouts (1 s to connect, 3 s to
 * answer, 10 s for the function, sized for DynamoDB itself) would turn that slowness into 503s.
 * These tests are about correctness under concurrency; the 503 of a slow or hung database is the
 * outage suite's subject.
 */
process.env.DYNAMODB_CONNECT_TIMEOUT_MS ??= '10000';
process.env.DYNAMODB_REQUEST_TIMEOUT_MS ??= '30000';
process.env.LOCAL_FUNCTION_TIMEOUT_MS ??= '60000';
