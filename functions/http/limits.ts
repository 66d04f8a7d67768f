/** The largest request body the functions read (API Gateway's own limit is 10 MiB). */
export const MAX_BODY_BYTES = 16 * 1024;

/** The longest If-Match read: far longer than any list of our tags (38 characters each). */
export const MAX_IF_MATCH_LENGTH = 1024;
