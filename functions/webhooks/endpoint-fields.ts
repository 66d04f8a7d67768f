import { validationFailed, type Problem } from '#http/errors';
import { webhookUrlProblem } from './rules.ts';

/**
 * What the schema cannot say about an endpoint's fields: the URL rules (webhooks.ts) and `*`
 * standing alone. A 422 naming the field, like every other field rule.
 */
export function checkEndpointFields(body: { url?: string; event_types?: string[] }): void {
  const problems: Problem[] = [];
  if (body.url !== undefined) {
    const problem = webhookUrlProblem(body.url);
    if (problem) problems.push({ message: `webhook_endpoint.url ${problem}`, field: 'webhook_endpoint.url' });
  }
  if (body.event_types?.includes('*') && body.event_types.length > 1) {
    problems.push({ message: 'webhook_endpoint.event_types must be ["*"] alone or a list of event types without "*"', field: 'webhook_endpoint.event_types' });
  }
  if (problems.length > 0) throw validationFailed(problems);
}
