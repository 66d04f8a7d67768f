/**
 * Imported before any handler module loads by the suites that make a sender fail after its
 * claim: the claim's lease shortened from 60 s to 4 s (still longer than the tests' 1.5 s attempt
 * time-out), so that a copy which meets it comes back within the test's time.
 */
process.env.WEBHOOK_LEASE_SECONDS ??= '4';
