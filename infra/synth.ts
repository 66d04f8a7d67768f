import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from './build.ts';
import { PROJECT_ROOT, type TillgateStack } from './tillgate-stack.ts';

export interface Synthesized {
  readonly app: App;
  readonly stack: TillgateStack;
  readonly template: Template;
}

/** The feature flags of cdk.json, so the tests build the app the CLI builds. */
function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

/**
 * Builds and synthesizes the app in memory (for the infra tests and the generated docs,
 * scripts/docs/templates.ts), with the cdk-nag packs registered exactly as in infra/app.ts: `app.synth()` throws on any unacknowledged finding. Bundling is skipped
 * (`aws:cdk:bundling-stacks: []`): the assertions are about the template, and `npm test` has
 * already built and checked the real bundles with `cdk synth` (see bundles.test.ts).
 * The assembly goes to a temporary directory, never to cdk.out, which the end-to-end suite reads.
 */
export function synthesize(context: Record<string, string> = {}): Synthesized {
  // CDK's built-in CloudFormation schema check costs seconds per synth; `cdk synth` in `npm test`
  // runs it on the real app, so the in-memory copies skip it. cdk-nag still runs on every synth.
  process.env.CDK_VALIDATION = 'false';
  const app = new App({
    outdir: mkdtempSync(path.join(tmpdir(), 'tillgate-cdk-')),
    analyticsReporting: false,
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], ...context },
  });
  const stack = buildApp(app);
  app.synth();
  return { app, stack, template: Template.fromStack(stack) };
}
