/**
 * Imported first by the webhook suites, before any handler module loads: the local stack's
 * webhook settings (http:// and loopback receivers), a short retry schedule and a short attempt
 * time-out, so that retries and time-outs are tested in seconds, and the lanes' bounds to match.
 */
process.env.TILLGATE_LOCAL_WEBHOOKS ??= 'true';
process.env.WEBHOOK_RETRY_SCHEDULE ??= '1,1,1';
process.env.WEBHOOK_TIMEOUT_MS ??= '1500';
// The lanes (functions/webhooks/lanes.ts) scaled as the time-out is, with room for a loaded
// machine: a 2xx after 900 ms is slow (3 s in AWS), one within 300 ms fast (1 s); an account
// holds at most 6 lanes (40 in AWS), so that the small pools of the isolation tests (8 senders
// where AWS has 200) are bigger than one account's share, as in AWS.
process.env.WEBHOOK_SLOW_MS ??= '900';
process.env.WEBHOOK_ACCOUNT_LANES ??= '6';
if (process.env.WEBHOOK_TEST_LOG) process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
