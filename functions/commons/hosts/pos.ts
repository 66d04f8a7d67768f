import type { ErrorCode, Problem } from '../errors.ts';

/**
 * The pos host's error body: the void response shape, with `errors` for the integration and one
 * display message a cashier can act on (never internals).
 */
export function posErrorBody(code: ErrorCode, problems: readonly Problem[], requestId: string) {
  return {
    transaction: {
      errors: problems.map(({ message }) => ({ message })),
      display_messages: [
        { message: cashierMessage(code, problems, requestId), message_id: code, message_content: { request_id: requestId }, priority: 1 },
      ],
    },
  };
}

const UNREADABLE = 'The till sent a request the service cannot read. Try again; if it keeps failing, call support.';

function cashierMessage(code: ErrorCode, problems: readonly Problem[], requestId: string): string {
  switch (code) {
    case 'unauthorized':
      return "This till is not authorised to void transactions. Ask a manager to check the till's API token.";
    case 'validation_failed':
      return `Void not accepted: ${problems.map((p) => p.message).join('; ')}. Check the transaction and try again.`;
    case 'service_unavailable':
      return 'Voiding is temporarily unavailable. Wait a moment and try again; the void will not be recorded twice.';
    case 'bad_request':
    case 'payload_too_large':
    case 'unsupported_media_type':
      return UNREADABLE;
    case 'not_found':
      return 'The till asked for something the service does not offer. Call support.';
    case 'conflict':
    case 'precondition_failed':
      return 'This void conflicts with an earlier one. Call a supervisor.';
    case 'internal_error':
      return `Something went wrong while voiding. Try again; if it keeps failing, call support with reference ${requestId}.`;
  }
}
