import type { ErrorCode, Problem } from '#http/errors';
import type { TillAttempt } from '#functions/routes';

/**
 * The pos host's error body: the void response shape, with `errors` for the integration and one
 * display message a cashier can act on (never internals), naming what the till tried (the `till`
 * of the route's row in functions/routes.ts).
 */
export function posErrorBody(attempt: TillAttempt, code: ErrorCode, problems: readonly Problem[], requestId: string, about: Partial<About> = {}) {
  return {
    transaction: {
      errors: problems.map(({ message }) => ({ message })),
      display_messages: [
        {
          message: cashierMessage(attempt, code, problems, requestId, about),
          message_id: code,
          message_content: { request_id: requestId },
          priority: 1,
        },
      ],
    },
  };
}

/** What a few texts name beside the attempt: the site a bound till was refused at, the wait of a 429. */
interface About {
  readonly subject: string;
  readonly retryAfterSeconds: number;
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * A text a cashier can act on. Only a fault a retry can cure (503, and a 500 that may be a
 * passing fault) says "try again"; a refused token, a refused scope, an unreadable request or a
 * rejected transaction would be refused again, so those say who can fix it.
 */
export function cashierMessage(attempt: TillAttempt, code: ErrorCode, problems: readonly Problem[], requestId: string, about: Partial<About> = {}): string {
  const { noun } = attempt;
  switch (code) {
    case 'unauthorized':
      return `${capital(noun)} refused: the service did not accept this till's API token. Ask a manager to check the till's token.`;
    case 'forbidden':
      return `${capital(noun)} refused: this till's token is not allowed to do this. Ask a manager to give the till a token for tills.`;
    case 'site_not_allowed':
      return `${capital(noun)} refused: this till's token is not allowed at site ${about.subject ?? 'this site'}. Ask a manager to give the till a token for this site.`;
    case 'too_many_unknown_codes':
      return `${capital(noun)} paused: this till sent too many codes that do not exist. Wait ${about.retryAfterSeconds ?? 60} seconds, then try again with codes scanned from the customer's voucher.`;
    case 'validation_failed':
      return `${capital(noun)} not accepted: ${problems.map((p) => p.message).join('; ')}. Correct the transaction before sending it again.`;
    case 'service_unavailable':
      return `${attempt.activity} is temporarily unavailable. Wait a moment and try again; nothing will be recorded twice.`;
    case 'bad_request':
    case 'payload_too_large':
    case 'unsupported_media_type':
      return `The till sent a ${noun} the service cannot read. Call support: the till's software must be fixed.`;
    case 'not_found':
      return 'The till asked for something the service does not offer. Call support.';
    case 'conflict':
    case 'precondition_failed':
      return `This ${noun} conflicts with an earlier one. Call a supervisor.`;
    case 'internal_error':
      return `Something went wrong with this ${noun}. Try again; if it keeps failing, call support with reference ${requestId}.`;
  }
}
