import type { BodyRules, BodyRuleProblem } from '#http/validation';
import { webhookUrlProblem } from './rules.ts';

/**
 * What the schema cannot say about an endpoint's fields: the URL rules (rules.ts, which resolve
 * nothing) and `*` standing alone. The body middleware runs them with the schema
 * (http/validation.ts), on the fields the schema accepted, so one 422 names every problem of the
 * body, each with its field: an unknown key does not hide a refused URL.
 */
export const endpointFieldRules: BodyRules = (body, passed) => {
  const problems: BodyRuleProblem[] = [];
  if (passed('url') && typeof body.url === 'string') {
    const problem = webhookUrlProblem(body.url);
    if (problem) problems.push({ key: 'url', message: problem });
  }
  const types = body.event_types;
  if (passed('event_types') && Array.isArray(types) && types.includes('*') && types.length > 1) {
    problems.push({ key: 'event_types', message: 'must be ["*"] alone or a list of event types without "*"' });
  }
  return problems;
};
