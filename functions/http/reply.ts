/** What a handler returns: data, never headers. */
export interface Reply {
  readonly statusCode: number;
  readonly body?: unknown;
  /** A JSON body already encoded (a stored first response), sent byte for byte. */
  readonly rawJson?: string;
  /** A body that is not JSON, sent as is (the one-byte DELETE answer). */
  readonly rawBody?: string;
  readonly location?: string;
  /** The answer of an earlier identical request, sent again. */
  readonly replayed?: boolean;
}

export const ok = (body: unknown): Reply => ({ statusCode: 200, body });
export const created = (location: string, body: unknown): Reply => ({ statusCode: 201, body, location });
/** The original service answers an acknowledged DELETE with a single space. */
export const acknowledged = (): Reply => ({ statusCode: 200, rawBody: ' ' });
