/**
 * Imported before env.ts by test/e2e/webhooks/adaptive-lanes.test.ts: an attempt time-out of 8 s,
 * so that a slow answer is one after 4.5 s and a fast one within 1.5 s (lanes.ts), wide enough
 * for a receiver that takes 600 ms (so that the requests it holds at once are seen) to be fast on
 * a loaded machine; an account holds at most 8 lanes, twice the initial 4.
 */
process.env.WEBHOOK_TIMEOUT_MS ??= '8000';
process.env.WEBHOOK_SLOW_MS ??= '4500';
process.env.WEBHOOK_ACCOUNT_LANES ??= '8';
