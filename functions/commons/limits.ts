/** The largest request body the functions read (API Gateway's own limit is 10 MiB). */
export const MAX_BODY_BYTES = 16 * 1024;
