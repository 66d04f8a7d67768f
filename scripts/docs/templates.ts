import { synthesize } from '../../infra/synth.ts';
import type { TemplateJson } from './generated.ts';

/** Every optional feature of the stack on, so that outputs shown only with an option are listed too. */
const EVERY_OPTION = {
  coreDomainName: 'api.example.com',
  coreCertificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/core',
  coreHostedZoneId: 'Z0123456789ABC',
  coreHostedZoneName: 'example.com',
  posDomainName: 'pos.example.com',
  posCertificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/pos',
  alarmEmail: 'oncall@example.com',
  alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:pager',
  apiGatewayCloudWatchRole: 'true',
  webAclArn: 'arn:aws:wafv2:eu-west-1:111111111111:regional/webacl/tillgate/abc',
};

/** The stack's template as `cdk synth` builds it (default context), and with every option. */
export function synthesizedTemplates(): { plain: TemplateJson; everything: TemplateJson } {
  // The default stage warns that its alarms notify nobody: true, and not news here.
  const warn = console.warn;
  const error = console.error;
  console.warn = console.error = () => undefined;
  try {
    return {
      plain: synthesize().template.toJSON() as TemplateJson,
      everything: synthesize(EVERY_OPTION).template.toJSON() as TemplateJson,
    };
  } finally {
    console.warn = warn;
    console.error = error;
  }
}
