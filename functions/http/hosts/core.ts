import type { Problem } from '#http/errors';

/** The core host's error body: `{"errors":[{"message":…,"field":…}]}`, one entry per problem. */
export function coreErrorBody(problems: readonly Problem[]) {
  return { errors: problems.map(({ message, field }) => (field !== undefined ? { message, field } : { message })) };
}
