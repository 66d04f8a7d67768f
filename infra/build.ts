import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { readConfig } from './config.ts';
import { TillgateStack } from './tillgate-stack.ts';

/**
 * Builds the tillgate stack into an app and registers the cdk-nag packs as validation plugins,
 * so that synth fails on any unacknowledged finding. Shared by infra/app.ts and the tests.
 */
export function buildApp(app: App): TillgateStack {
  const config = readConfig(app.node);
  // Environment-agnostic: `cdk deploy` targets the account and region of the caller's credentials,
  // and the synthesized template does not depend on the machine that built it.
  const stack = new TillgateStack(app, `Tillgate-${config.stage}`, {
    config,
    description: `tillgate (${config.stage}): point-of-sale voids, code generators and events`,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return stack;
}
