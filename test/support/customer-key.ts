/**
 * The customer key of every test run (functions/secrets.ts): fixed, so that a test may compute the
 * hash a customer id must be stored as. The global setup hands it to the functions as the local
 * stack does (startLocalStack's `secrets`), in TILLGATE_CUSTOMER_KEY.
 */
export const TEST_CUSTOMER_KEY = '7465737420637573746f6d6572206b6579206f6620746865207465737473210a';

/** The cursor key of every test run (functions/secrets.ts), handed over the same way in TILLGATE_CURSOR_KEY. */
export const TEST_CURSOR_KEY = '7465737420637572736f72206b6579206f662074686520746573747320210a0a';
