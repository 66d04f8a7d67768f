import { App } from 'aws-cdk-lib';
import { buildApp } from './build.ts';

/**
 * The CDK app (`cdk synth`, `cdk deploy`). Settings come from context: see infra/config.ts and
 * docs/deploying.md. cdk-nag runs on every synth and fails it on any finding that
 * is not acknowledged with a reason.
 */
buildApp(new App());
