/**
 * Imported first by the suites that check the rules as they hold in AWS: no http:// URLs, no
 * loopback receivers (the local stack's setting is off), before any handler module loads.
 */
process.env.TILLGATE_LOCAL_WEBHOOKS = 'false';
