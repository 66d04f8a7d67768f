import { beforeAll, describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../infra/build.ts';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { readConfig } from '../../infra/config.ts';
import { secretIds } from '#functions/secrets';
import { routes } from '#functions/routes';
import { OWN_WEB_ACL_WITHOUT_TOKEN_LIMIT } from '../../infra/tillgate-stack.ts';
import { synthesize, type Synthesized } from './synth.ts';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[]; DeletionPolicy?: string };

/** Every optional context switch at once: one synth keeps the suite fast on two cores. */
const EVERYTHING = {
  stage: 'dev',
  ephemeral: 'true',
  throttleRateLimit: '20',
  throttleBurstLimit: '40',
  logRetentionDays: '7',
  eventRetentionDays: '3',
  tokenCacheSeconds: '5',
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
  customerKeyRotation: '2026-12-01',
};

let synth: Synthesized;
let resources: Record<string, Resource>;
const ofType = (type: string) =>
  Object.entries(resources)
    .filter(([, r]) => r.Type === type)
    .map(([, r]) => r);

beforeAll(() => {
  synth = synthesize(EVERYTHING);
  resources = synth.template.toJSON().Resources as Record<string, Resource>;
});

describe('context switches', () => {
  it('names the stack and both stages after the stage, with its throttling', () => {
    expect(synth.stack.stackName).toBe('Tillgate-dev');
    const stages = ofType('AWS::ApiGateway::Stage');
    expect(stages.map((s) => s.Properties.StageName)).toEqual(['dev', 'dev']);
    for (const stage of stages) {
      expect(stage.Properties.MethodSettings[0]).toMatchObject({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 });
    }
  });

  it('makes a throwaway stage deletable: tables and log groups go with the stack', () => {
    for (const table of ofType('AWS::DynamoDB::Table')) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    }
    for (const group of ofType('AWS::Logs::LogGroup')) {
      expect(group.DeletionPolicy).toBe('Delete');
      expect(group.Properties.RetentionInDays).toBe(7);
    }
  });

  it('makes the secrets of a throwaway stage go with it too', () => {
    const secrets = ofType('AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(secretIds.length);
    for (const secret of secrets) {
      expect(secret.DeletionPolicy).toBe('Delete');
      expect(secret.Properties.Description).toMatch(/^tillgate \(dev\): /);
    }
  });

  it("hands a rotation's label to the functions that read the customer key, and to no other (so each reads it again)", () => {
    const reading = routes.filter((route) => route.secrets?.includes('customerKey')).map((route) => route.operationId);
    expect(reading.length).toBeGreaterThan(0);
    for (const [operationId, fn] of synth.stack.functions) {
      const variables = resources[synth.stack.getLogicalId(fn.node.defaultChild as never)]!.Properties.Environment.Variables;
      expect(variables.CUSTOMER_KEY_ROTATION, operationId).toBe(reading.includes(operationId) ? '2026-12-01' : undefined);
    }
    for (const fn of ofType('AWS::Lambda::Function')) {
      if (fn.Properties.Environment.Variables.CUSTOMER_KEY_ROTATION !== undefined)
        expect(fn.Properties.Environment.Variables.CUSTOMER_KEY_SECRET_ARN).toBeDefined();
    }
  });

  it('hands retention and token cache settings to every function', () => {
    for (const fn of ofType('AWS::Lambda::Function')) {
      expect(fn.Properties.Environment.Variables).toMatchObject({
        EVENT_RETENTION_DAYS: '3',
        TOKEN_CACHE_SECONDS: '5',
        TILLGATE_STAGE: 'dev',
      });
    }
  });

  it('puts each host on its custom domain, mapped to its stage, with an alias record where a zone is given', () => {
    const domains = ofType('AWS::ApiGateway::DomainName');
    expect(domains.map((d) => d.Properties.DomainName).sort()).toEqual(['api.example.com', 'pos.example.com']);
    for (const domain of domains) {
      expect(domain.Properties).toMatchObject({
        EndpointConfiguration: { Types: ['REGIONAL'] },
        SecurityPolicy: 'TLS_1_2',
      });
      expect(domain.Properties.RegionalCertificateArn).toMatch(/^arn:aws:acm:/);
    }
    const mappings = ofType('AWS::ApiGateway::BasePathMapping');
    expect(mappings).toHaveLength(2);
    for (const mapping of mappings) expect(mapping.Properties.Stage).toBeDefined();

    const records = ofType('AWS::Route53::RecordSet');
    expect(records).toHaveLength(1);
    expect(records[0]!.Properties).toMatchObject({ Name: 'api.example.com.', Type: 'A', HostedZoneId: 'Z0123456789ABC' });

    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.CoreBaseUrl!.Value).toBe('https://api.example.com');
    expect(outputs.PosBaseUrl!.Value).toBe('https://pos.example.com');
    expect(outputs.PosDomainTarget).toBeDefined();
  });

  it('sends alarm and recovery notices to the e-mail topic and to the given topic', () => {
    const topics = ofType('AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    expect(ofType('AWS::SNS::Subscription')[0]!.Properties).toMatchObject({ Protocol: 'email', Endpoint: 'oncall@example.com' });
    for (const alarm of ofType('AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties.AlarmActions).toHaveLength(2);
      expect(alarm.Properties.AlarmActions).toContain(EVERYTHING.alarmTopicArn);
      expect(alarm.Properties.OKActions).toHaveLength(2);
    }
  });

  it('creates the account-level API Gateway logging role once, keeps it, and deploys the stages after it', () => {
    const accounts = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGateway::Account');
    expect(accounts).toHaveLength(1);
    const [accountId, account] = accounts[0]!;
    expect(account.DeletionPolicy).toBe('Retain');
    const roleId = account.Properties.CloudWatchRoleArn['Fn::GetAtt'][0] as string;
    expect(resources[roleId]!.DeletionPolicy).toBe('Retain');
    for (const stage of ofType('AWS::ApiGateway::Stage')) expect(stage.DependsOn).toContain(accountId);
    for (const api of ofType('AWS::ApiGateway::RestApi')) expect(api.Properties.Name).toMatch(/^tillgate-dev-/);
  });

  it("associates the operator's web ACL with both stages instead of the stack's own (a stage has one at most), and warns", () => {
    expect(ofType('AWS::WAFv2::WebACL')).toHaveLength(0);
    const warnings = synth.stack.node.metadata.filter((entry) => entry.type === 'aws:cdk:warning').map((entry) => String(entry.data));
    expect(warnings.some((w) => w.includes("webAclArn replaces the stack's web ACL") && w.includes(OWN_WEB_ACL_WITHOUT_TOKEN_LIMIT))).toBe(true);
    const associations = ofType('AWS::WAFv2::WebACLAssociation');
    expect(associations).toHaveLength(2);
    for (const association of associations) expect(association.Properties.WebACLArn).toBe(EVERYTHING.webAclArn);
  });

  it('still passes cdk-nag with every option on', () => {
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      expect(pack.validateScope(synth.app).violations.map((v) => v.ruleName)).toEqual([]);
    }
  });
});

describe('bad context fails the synth with a message naming the key', () => {
  const config = (context: Record<string, string>) => () => readConfig(new App({ context }).node);

  it.each([
    [{ stage: 'Prod_1' }, /stage/],
    [{ ephemeral: 'yes' }, /ephemeral must be true or false/],
    [{ throttleRateLimit: '0' }, /throttleRateLimit must be an integer/],
    [{ logRetentionDays: '31' }, /logRetentionDays must be one of/],
    [{ coreDomainName: 'api.example.com' }, /coreDomainName and coreCertificateArn go together/],
    [{ posDomainName: 'p.example.com', posCertificateArn: 'arn:x', posHostedZoneId: 'Z1' }, /posHostedZoneId and posHostedZoneName/],
    [{ tokenRateLimitEnabled: 'no' }, /tokenRateLimitEnabled must be true or false/],
    [{ tokenRateLimit: '9' }, /tokenRateLimit must be an integer from 10/],
    [{ tokenRateLimitWindowSeconds: '90' }, /tokenRateLimitWindowSeconds must be one of 60, 120, 300, 600/],
    [{ tokenlessRateLimit: '9' }, /tokenlessRateLimit must be an integer from 10/],
    [{ sourceRateLimit: '5' }, /sourceRateLimit must be 0 \(off\) or an integer from 10/],
    [{ customerKeyRotation: 'first of December' }, /customerKeyRotation must be 1-64 of A-Z a-z 0-9 \. _ : -/],
  ])('%j', (context, message) => {
    expect(config(context)).toThrow(message);
  });

  it('defaults to the prod stage, kept tables and 30-day retention', () => {
    expect(config({})()).toMatchObject({
      stage: 'prod',
      ephemeral: false,
      throttleRateLimit: 100,
      throttleBurstLimit: 200,
      logRetentionDays: 30,
      eventRetentionDays: 30,
      tokenCacheSeconds: 30,
      domains: {},
      apiGatewayCloudWatchRole: false,
      tokenRateLimitEnabled: true,
      tokenRateLimit: 300,
      tokenRateLimitWindowSeconds: 60,
      tokenlessRateLimit: 100,
      sourceRateLimit: 1500,
      secretRotations: {},
    });
  });
});

describe('the per-token limit, by context', () => {
  const build = (context: Record<string, string>) => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], ...context } });
    const stack = buildApp(app);
    return { stack, resources: Template.fromStack(stack).toJSON().Resources as Record<string, Resource> };
  };
  const typed = (resources: Record<string, Resource>, type: string) => Object.values(resources).filter((r) => r.Type === type);

  it('takes its limits and window (also the Retry-After) from context', () => {
    const { resources } = build({ tokenRateLimit: '1200', tokenRateLimitWindowSeconds: '300', tokenlessRateLimit: '40', sourceRateLimit: '5000' });
    const [acl] = typed(resources, 'AWS::WAFv2::WebACL');
    const named = (name: string) => acl!.Properties.Rules.find((r: any) => r.Name === name);
    expect(named('PerToken').Statement.RateBasedStatement).toMatchObject({ Limit: 1200, EvaluationWindowSec: 300 });
    expect(named('PerSourceWithoutToken').Statement.RateBasedStatement).toMatchObject({ Limit: 40, EvaluationWindowSec: 300 });
    expect(named('PerSource').Statement.RateBasedStatement).toMatchObject({ Limit: 5000, EvaluationWindowSec: 300 });
    for (const name of ['PerTokenLimitCore', 'PerSourceLimitPos'])
      expect(named(name).Action.Block.CustomResponse.ResponseHeaders[0]).toEqual({ Name: 'Retry-After', Value: '300' });
  });

  it('has no all-requests rule with sourceRateLimit=0, and the rest as before', () => {
    const { resources } = build({ sourceRateLimit: '0' });
    const [acl] = typed(resources, 'AWS::WAFv2::WebACL');
    const names = acl!.Properties.Rules.map((r: any) => r.Name);
    expect(names).not.toContain('PerSource');
    expect(names).toContain('PerSourceWithoutToken');
    expect(names).toContain('PerSourceLimitCore');
  });

  it('is off with tokenRateLimitEnabled=false: no web ACL, no association, cdk-nag still clean (APIG3 acknowledged with the reason)', () => {
    const { stack, resources } = build({ tokenRateLimitEnabled: 'false', alarmEmail: 'oncall@example.com' });
    expect(typed(resources, 'AWS::WAFv2::WebACL')).toHaveLength(0);
    expect(typed(resources, 'AWS::WAFv2::WebACLAssociation')).toHaveLength(0);
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      expect(pack.validateScope(stack.node.root).violations.map((v) => v.ruleName)).toEqual([]);
    }
  });
});
