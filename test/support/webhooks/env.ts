/**
 * Imported first by the webhook suites, before any handler module loads: the local stack's
 * webhook settings (http:// and loopback receivers), a short retry schedule and a short attempt
 * time-out, so that retries and time-outs are tested in seconds.
 */
process.env.TILLGATE_LOCAL_WEBHOOKS ??= 'true';
process.env.WEBHOOK_RETRY_SCHEDULE ??= '1,1,1';
process.env.WEBHOOK_TIMEOUT_MS ??= '1500';
if (process.env.WEBHOOK_TEST_LOG) process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
