import { idPathTarget } from '../http/oracle.ts';

/**
 * What PRODUCT.md says GET and DELETE /v1.0/events/{id} must answer for a path, written from the
 * contract, so that events/fuzz.test.ts compares two readings of it, not one with itself (the
 * events list's query strings are judged by http/oracle.ts).
 */
/** The event id a path reaches, or why not: `no-route` (gateway 404) or `bad-id` (400). */
export const eventPathTarget = (path: string) => idPathTarget('events', path);
