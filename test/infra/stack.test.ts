import { beforeAll, describe, expect, it } from 'vitest';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Table, AttributeType } from 'aws-cdk-lib/aws-dynamodb';
import type { IConstruct } from 'constructs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { hosts, routes, type HostId, type KeyAccess, type Route, type TableAccess } from '#functions/routes';
import type { BucketAccess, BucketId } from '#functions/buckets';
import { tableIds, tables, type TableId, type TableSpec } from '#functions/tables';

const specOf = (id: TableId): TableSpec => tables[id];
import { workers } from '#functions/workers';
import { queueIds, queues } from '#functions/queues';
import { keyIds, keys, secretIds, secrets, type KeyId } from '#functions/secrets';
import { logicalId, synthesize, type Synthesized } from './synth.ts';

type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DependsOn?: string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Metadata?: Record<string, unknown>;
};

let synth: Synthesized;
let resources: Record<string, Resource>;
const apiId = (host: HostId) => logicalId(synth.stack, synth.stack.apis[host].api);
const functionId = (route: Route) => logicalId(synth.stack, synth.stack.functions.get(route.operationId)!);
const tableId = (id: TableId) => logicalId(synth.stack, synth.stack.dataTables.byId[id].table);
const customerKeyId = () => logicalId(synth.stack, synth.stack.secrets.byId.customerKey);
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const keyId = (id: KeyId) => logicalId(synth.stack, synth.stack.keys.byId[id]);

/**
 * The statements a function's role must hold for the keys its row declares: exactly those KMS
 * actions, on the key, under the key's encryption context (as CDK writes them: one action alone
 * as a string).
 */
const kmsStatements = (access: KeyAccess = {}) =>
  (Object.entries(access) as [KeyId, readonly string[]][]).map(([id, actions]) => ({
    Action: actions.length === 1 ? `kms:${actions[0]}` : actions.map((a) => `kms:${a}`),
    Condition: {
      StringEquals: Object.fromEntries(Object.entries(keys[id].encryptionContext).map(([name, value]) => [`kms:EncryptionContext:${name}`, value])),
    },
    Effect: 'Allow',
    Resource: { 'Fn::GetAtt': [keyId(id), 'Arn'] },
  }));

/** The key ARN variables a function must have: those of the keys its row declares, and no local key. */
function expectKeyVariables(variables: Record<string, unknown>, access: KeyAccess = {}) {
  for (const id of keyIds) {
    expect(variables[keys[id].arnEnvVar]).toEqual(id in access ? { 'Fn::GetAtt': [keyId(id), 'Arn'] } : undefined);
    expect(variables).not.toHaveProperty(keys[id].localEnvVar);
  }
}

beforeAll(() => {
  synth = synthesize();
  resources = synth.template.toJSON().Resources as Record<string, Resource>;
});

/** `/v1.0/events/{id}` from a method's ResourceId, walking ParentId up to the API root. */
function pathOf(resourceRef: any): string {
  const parts: string[] = [];
  let ref = resourceRef;
  while (ref.Ref) {
    const resource = resources[ref.Ref]!;
    parts.unshift(resource.Properties.PathPart);
    ref = resource.Properties.ParentId;
  }
  expect(ref['Fn::GetAtt']?.[1]).toBe('RootResourceId');
  return `/${parts.join('/')}`;
}

describe('routes come from the route table', () => {
  it.each(routes.map((route) => [route.operationId, route] as const))('%s is its method and path on its own host API, with its own function', (_, route) => {
    const methods = ofType('AWS::ApiGateway::Method').filter(([, m]) => m.Properties.OperationName === route.operationId);
    expect(methods).toHaveLength(1);
    const [, method] = methods[0]!;
    expect(method.Properties.HttpMethod).toBe(route.method);
    expect(method.Properties.RestApiId).toEqual({ Ref: apiId(route.host) });
    expect(pathOf(method.Properties.ResourceId)).toBe(route.path);
    expect(method.Properties.AuthorizationType).toBe('NONE');
    expect(method.Properties.Integration.Type).toBe('AWS_PROXY');
    expect(JSON.stringify(method.Properties.Integration.Uri)).toContain(JSON.stringify({ 'Fn::GetAtt': [functionId(route), 'Arn'] }));
  });

  it('gives each host API exactly the routes of its host and every route a distinct function', () => {
    for (const host of Object.keys(hosts) as HostId[]) {
      const onApi = ofType('AWS::ApiGateway::Method').filter(([, m]) => m.Properties.RestApiId.Ref === apiId(host) && m.Properties.Integration.Type !== 'MOCK');
      expect(onApi.map(([, m]) => m.Properties.OperationName).sort()).toEqual(
        routes
          .filter((r) => r.host === host)
          .map((r) => r.operationId)
          .sort(),
      );
    }
    expect(ofType('AWS::ApiGateway::RestApi')).toHaveLength(Object.keys(hosts).length);
    expect(ofType('AWS::Lambda::Function')).toHaveLength(routes.length + workers.length);
    expect(new Set(routes.map(functionId)).size).toBe(routes.length);
  });
});

describe('405 with Allow: API Gateway answers a known path with another method itself', () => {
  const mocks = (host: HostId) =>
    ofType('AWS::ApiGateway::Method').filter(([, m]) => m.Properties.RestApiId.Ref === apiId(host) && m.Properties.HttpMethod === 'ANY');

  it.each(Object.keys(hosts) as HostId[])('%s: one ANY mock method per resource of the route table, and none elsewhere', (host) => {
    const paths = [...new Set(routes.filter((r) => r.host === host).map((r) => r.path))].sort();
    expect(
      mocks(host)
        .map(([, m]) => pathOf(m.Properties.ResourceId))
        .sort(),
    ).toEqual(paths);
  });

  it.each(Object.keys(hosts) as HostId[])("%s: each answers 405 with Allow, the functions' headers and the host error body, running nothing", (host) => {
    for (const [, mock] of mocks(host)) {
      const path = pathOf(mock.Properties.ResourceId);
      const allow = routes
        .filter((r) => r.host === host && r.path === path)
        .map((r) => r.method)
        .sort()
        .join(', ');
      const integration = mock.Properties.Integration;
      expect(integration.Type, path).toBe('MOCK');
      expect(integration.Uri).toBeUndefined();
      expect(integration.RequestTemplates).toEqual({ 'application/json': '{"statusCode": 405}' });
      expect(integration.IntegrationResponses).toHaveLength(1);
      const [response] = integration.IntegrationResponses;
      expect(response.StatusCode).toBe('405');
      expect(response.SelectionPattern).toBeUndefined(); // the default: whatever the mock made of the request
      expect(response.ResponseParameters).toEqual({
        'method.response.header.Allow': `'${allow}'`,
        'method.response.header.Content-Type': "'application/json; charset=utf-8'",
        'method.response.header.X-Content-Type-Options': "'nosniff'",
        'method.response.header.Cache-Control': "'no-store'",
        'method.response.header.X-Request-Id': 'context.requestId',
      });
      const message = `Method $context.httpMethod is not allowed on this path; it serves ${allow} (see the Allow header)`;
      const body = JSON.parse(response.ResponseTemplates['application/json']);
      if (host === 'core') expect(body).toEqual({ errors: [{ message }] });
      else {
        expect(body).toEqual({
          transaction: {
            errors: [{ message }],
            display_messages: [{ message, message_id: 'method_not_allowed', message_content: { request_id: '$context.requestId' }, priority: 1 }],
          },
        });
      }
      expect(mock.Properties.MethodResponses).toEqual([
        { StatusCode: '405', ResponseParameters: Object.fromEntries(Object.keys(response.ResponseParameters).map((name) => [name, true])) },
      ]);
    }
  });
});

describe('the per-token limit: a WAF web ACL shipped with the stack', () => {
  const acl = () => {
    const acls = ofType('AWS::WAFv2::WebACL');
    expect(acls).toHaveLength(1);
    return acls[0]!;
  };

  it('is one regional web ACL, allowing by default, sampling no requests (they would hold tokens)', () => {
    const [, webAcl] = acl();
    expect(webAcl.Properties.Scope).toBe('REGIONAL');
    expect(webAcl.Properties.DefaultAction).toEqual({ Allow: {} });
    expect(webAcl.Properties.Name).toBeUndefined();
    for (const config of [webAcl.Properties.VisibilityConfig, ...webAcl.Properties.Rules.map((r: any) => r.VisibilityConfig)]) {
      expect(config).toMatchObject({ SampledRequestsEnabled: false, CloudWatchMetricsEnabled: true });
    }
  });

  const rule = (name: string) => {
    const found = acl()[1].Properties.Rules.find((r: any) => r.Name === name);
    expect(found, name).toBeDefined();
    return found;
  };
  const wellFormed = {
    RegexMatchStatement: {
      RegexString: '^tg_[A-Za-z0-9_-]{43}$',
      FieldToMatch: { SingleHeader: { Name: 'x-auth-token' } },
      TextTransformations: [{ Priority: 0, Type: 'NONE' }],
    },
  };

  it('has its rules in this order: oversize headers refused first, then the three counters, then the blocks', () => {
    expect(acl()[1].Properties.Rules.map((r: any) => [r.Priority, r.Name])).toEqual(
      [
        'HeadersOversizeCore',
        'HeadersOversizePos',
        'PerToken',
        'PerSourceWithoutToken',
        'PerSource',
        'PerTokenLimitCore',
        'PerTokenLimitPos',
        'PerSourceLimitCore',
        'PerSourceLimitPos',
      ].map((name, priority) => [priority, name]),
    );
  });

  it('counts requests per well-formed X-Auth-Token value (custom aggregation key) and labels those over 300 per 60 s', () => {
    expect(rule('PerToken')).toMatchObject({
      Action: { Count: {} },
      RuleLabels: [{ Name: 'tillgate:token-over-limit' }],
      Statement: {
        RateBasedStatement: {
          Limit: 300,
          EvaluationWindowSec: 60,
          AggregateKeyType: 'CUSTOM_KEYS',
          CustomKeys: [{ Header: { Name: 'x-auth-token', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
          ScopeDownStatement: wellFormed,
        },
      },
    });
  });

  it('counts per source address the requests without a well-formed token (over 100 per 60 s), and all requests (over 1,500)', () => {
    expect(rule('PerSourceWithoutToken')).toMatchObject({
      Action: { Count: {} },
      RuleLabels: [{ Name: 'tillgate:source-over-limit' }],
      Statement: {
        RateBasedStatement: { Limit: 100, EvaluationWindowSec: 60, AggregateKeyType: 'IP', ScopeDownStatement: { NotStatement: { Statement: wellFormed } } },
      },
    });
    expect(rule('PerSource')).toEqual({
      Name: 'PerSource',
      Priority: 4,
      Action: { Count: {} },
      RuleLabels: [{ Name: 'tillgate:source-over-limit' }],
      Statement: { RateBasedStatement: { Limit: 1500, EvaluationWindowSec: 60, AggregateKeyType: 'IP' } },
      VisibilityConfig: { CloudWatchMetricsEnabled: true, SampledRequestsEnabled: false, MetricName: 'tillgate-prod-per-source' },
    });
  });

  it('refuses with 400 a request whose headers WAF cannot inspect whole (oversize handling MATCH), before any counter', () => {
    const oversize = {
      SizeConstraintStatement: {
        FieldToMatch: { Headers: { MatchPattern: { All: {} }, MatchScope: 'ALL', OversizeHandling: 'MATCH' } },
        ComparisonOperator: 'GT',
        Size: 8192,
        TextTransformations: [{ Priority: 0, Type: 'NONE' }],
      },
    };
    expect(rule('HeadersOversizeCore').Statement).toEqual({ AndStatement: { Statements: [oversize, onCore] } });
    expect(rule('HeadersOversizePos').Statement).toEqual(oversize);
    for (const host of ['core', 'pos'] as const) {
      expect(rule(`HeadersOversize${host === 'core' ? 'Core' : 'Pos'}`).Action.Block.CustomResponse).toEqual({
        ResponseCode: 400,
        CustomResponseBodyKey: `${host}-headers-too-large`,
        ResponseHeaders: [
          { Name: 'Cache-Control', Value: 'no-store' },
          { Name: 'X-Content-Type-Options', Value: 'nosniff' },
        ],
      });
    }
    const bodies = acl()[1].Properties.CustomResponseBodies;
    const message = 'Request headers are too large: send at most 200 headers and 8192 bytes of headers';
    expect(JSON.parse(bodies['core-headers-too-large'].Content)).toEqual({ errors: [{ message }] });
    expect(JSON.parse(bodies['pos-headers-too-large'].Content).transaction.display_messages[0]).toMatchObject({ message_id: 'headers_too_large' });
  });

  const onCore = {
    ByteMatchStatement: {
      FieldToMatch: { UriPath: {} },
      PositionalConstraint: 'CONTAINS',
      SearchString: '/v1.0/',
      TextTransformations: [{ Priority: 0, Type: 'NONE' }],
    },
  };

  it("blocks a labelled request with 429, Retry-After and the host's error body, the core host by its version prefix, the pos host the rest", () => {
    const bodies = acl()[1].Properties.CustomResponseBodies;
    for (const [prefix, labelKey, answer, message] of [
      [
        'PerTokenLimit',
        'tillgate:token-over-limit',
        'token-rate-limited',
        'Too many requests with this X-Auth-Token: it is over its own rate limit; retry after the Retry-After delay',
      ],
      [
        'PerSourceLimit',
        'tillgate:source-over-limit',
        'source-rate-limited',
        'Too many requests from this network address (without a valid X-Auth-Token, or in all): it is over its rate limit; retry after the Retry-After delay',
      ],
    ] as const) {
      const label = { LabelMatchStatement: { Scope: 'LABEL', Key: labelKey } };
      const core = rule(`${prefix}Core`);
      const pos = rule(`${prefix}Pos`);
      expect(core.Statement).toEqual({ AndStatement: { Statements: [label, onCore] } });
      expect(pos.Statement).toEqual(label);
      for (const [blocking, host] of [
        [pos, 'pos'],
        [core, 'core'],
      ] as const) {
        expect(blocking.Action.Block.CustomResponse).toEqual({
          ResponseCode: 429,
          CustomResponseBodyKey: `${host}-${answer}`,
          ResponseHeaders: [
            { Name: 'Retry-After', Value: '60' },
            { Name: 'Cache-Control', Value: 'no-store' },
            { Name: 'X-Content-Type-Options', Value: 'nosniff' },
          ],
        });
      }
      expect(bodies[`core-${answer}`].ContentType).toBe('APPLICATION_JSON');
      expect(JSON.parse(bodies[`core-${answer}`].Content)).toEqual({ errors: [{ message }] });
      const posBody = JSON.parse(bodies[`pos-${answer}`].Content);
      expect(posBody.transaction.errors).toEqual([{ message }]);
      expect(posBody.transaction.display_messages[0]).toMatchObject({ message_id: answer.replaceAll('-', '_'), priority: 1 });
    }
  });

  it('is an output of the stack', () => {
    synth.template.hasOutput('TokenRateLimitWebAclArn', { Value: { 'Fn::GetAtt': [acl()[0], 'Arn'] } });
  });

  it('is associated with both stages', () => {
    const [aclId] = acl();
    const associations = ofType('AWS::WAFv2::WebACLAssociation').map(([, a]) => a.Properties);
    expect(associations).toHaveLength(2);
    for (const association of associations) expect(association.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    const stages = ofType('AWS::ApiGateway::Stage').map(([id]) => id);
    const targets = associations.map((a) => JSON.stringify(a.ResourceArn));
    for (const stage of stages)
      expect(
        targets.filter((t) => t.includes(`"Ref":"${stage}"`)),
        stage,
      ).toHaveLength(1);
  });
});

describe('functions', () => {
  it.each(routes.map((route) => [route.operationId, route] as const))(
    '%s runs Node.js 24 on arm64 with its own log group, tracing and the environment of its tables',
    (_, route) => {
      const fn = resources[functionId(route)]!;
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: 1024,
        Timeout: 10,
        TracingConfig: { Mode: 'Active' },
      });
      expect(fn.Metadata?.['tillgate:operationId']).toBe(route.operationId);

      const logGroupRef = fn.Properties.LoggingConfig.LogGroup.Ref as string;
      expect(resources[logGroupRef]!.Properties.RetentionInDays).toBe(30);

      const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
      const tableVariables = Object.keys(variables).filter((name) => name.endsWith('_TABLE'));
      const declared = Object.keys(route.tables) as TableId[];
      expect(tableVariables.sort()).toEqual(declared.map((id) => tables[id].envVar).sort());
      for (const id of declared) expect(variables[tables[id].envVar]).toEqual({ Ref: tableId(id) });
      // The customer key's ARN where the row names it (its value never: Secrets Manager keeps it), else nothing of it.
      const readsKey = route.secrets?.includes('customerKey') ?? false;
      expect(variables.CUSTOMER_KEY_SECRET_ARN).toEqual(readsKey ? { Ref: customerKeyId() } : undefined);
      expect(variables).not.toHaveProperty('TILLGATE_CUSTOMER_KEY');
      expectKeyVariables(variables, route.keys);
      expect(variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'tillgate',
        POWERTOOLS_METRICS_NAMESPACE: 'Tillgate',
        EVENT_RETENTION_DAYS: '30',
        TOKEN_CACHE_SECONDS: '30',
      });
      // Runtime source maps cost 15–19 ms per cold start; stacks are mapped on the error path.
      expect(variables).not.toHaveProperty('NODE_OPTIONS');
    },
  );
});

/** The statements a row's buckets call for: its actions on the bucket's objects. */
const bucketStatements = (access: BucketAccess = {}) =>
  Object.entries(access).map(([bucketId, actions]) => ({
    Action: actions.length === 1 ? actions[0] : [...actions].sort(),
    Effect: 'Allow',
    Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(synth.stack, synth.stack.buckets.byId[bucketId as BucketId]), 'Arn'] }, '/*']] },
  }));

describe('each function touches only its declared tables, with only the actions it needs', () => {
  /** table logical id → actions granted to the role (on the table and on its indexes alike). */
  function dynamoGrants(roleId: string): Map<string, { table: Set<string>; indexes: Map<string, Set<string>> }> {
    const grants = new Map<string, { table: Set<string>; indexes: Map<string, Set<string>> }>();
    for (const [, policy] of ofType('AWS::IAM::Policy')) {
      if (!policy.Properties.Roles.some((r: any) => r.Ref === roleId)) continue;
      for (const statement of policy.Properties.PolicyDocument.Statement) {
        const actions: string[] = [statement.Action].flat();
        if (!actions.some((a) => a.startsWith('dynamodb:'))) continue;
        expect(actions.every((a) => a.startsWith('dynamodb:'))).toBe(true);
        for (const resource of [statement.Resource].flat()) {
          const join = resource['Fn::Join']?.[1];
          const table = (join ? join[0] : resource)['Fn::GetAtt'][0] as string;
          const entry = grants.get(table) ?? { table: new Set(), indexes: new Map() };
          grants.set(table, entry);
          const target = join ? (entry.indexes.get(join[1]) ?? new Set<string>()) : entry.table;
          if (join) entry.indexes.set(join[1], target);
          actions.forEach((a) => target.add(a));
        }
      }
    }
    return grants;
  }

  it.each(routes.map((route) => [route.operationId, route] as const))('%s', (_, route) => {
    const fn = synth.stack.functions.get(route.operationId)!;
    const roleId = logicalId(synth.stack, fn.executionRole);
    expect(resources[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();

    const grants = dynamoGrants(roleId);
    const declared = Object.entries(route.tables) as [TableId, TableAccess][];
    expect([...grants.keys()].sort()).toEqual(declared.map(([id]) => tableId(id)).sort());
    for (const [id, actions] of declared) {
      // Exactly the declared actions, each once, on the table; Query alone on its indexes.
      const expected = actions.map((action) => `dynamodb:${action}`).sort();
      expect(new Set(actions).size, `${route.operationId} on ${id}: an action declared twice`).toBe(actions.length);
      const grant = grants.get(tableId(id))!;
      expect([...grant.table].sort(), `${route.operationId} on ${id}`).toEqual(expected);
      const indexes = actions.includes('Query') ? (specOf(id).indexes ?? []).map((i) => `/index/${i.name}`).sort() : [];
      expect([...grant.indexes.keys()].sort()).toEqual(indexes);
      for (const indexActions of grant.indexes.values()) expect([...indexActions]).toEqual(['dynamodb:Query']);
    }
    // No function holds a batch write, a scan or a Transact* action: none calls one. BatchGetItem
    // only where the route declares it (consistent reads of many keys at once).
    for (const grant of grants.values()) {
      expect(
        [...grant.table].filter((a) => /BatchWrite|Scan|Transact/.test(a)),
        route.operationId,
      ).toEqual([]);
    }
    for (const [id, actions] of declared) {
      if (!actions.includes('BatchGetItem'))
        expect([...grants.get(tableId(id))!.table], `${route.operationId} on ${id}`).not.toContain('dynamodb:BatchGetItem');
    }

    // Apart from its tables: its own log group, and X-Ray (which has no resource-level permissions);
    // a route that names a queue may send to it, and nothing else on it.
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
    const sqs = statements.filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('sqs:')));
    expect(sqs).toEqual(
      (route.queues ?? []).map((queueId) => ({
        Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [logicalId(synth.stack, synth.stack.workers.queues[queueId]), 'Arn'] },
      })),
    );
    // A route that names a secret may read its value, and nothing else on it.
    const secretStatements = statements.filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('secretsmanager:')));
    expect(secretStatements).toEqual(
      (route.secrets ?? []).map((secretId) => ({
        Action: 'secretsmanager:GetSecretValue',
        Effect: 'Allow',
        Resource: { Ref: logicalId(synth.stack, synth.stack.secrets.byId[secretId]) },
      })),
    );
    // A route that names a key may take exactly its declared KMS actions with it, under the key's encryption context.
    expect(statements.filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('kms:')))).toEqual(kmsStatements(route.keys));
    // A route that names a bucket takes exactly its declared actions on the bucket's objects (test/infra/codes/exports.test.ts).
    expect(statements.filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('s3:')))).toEqual(bucketStatements(route.buckets));
    const others = statements.filter(
      (s: any) =>
        ![s.Action]
          .flat()
          .some(
            (a: string) => a.startsWith('dynamodb:') || a.startsWith('sqs:') || a.startsWith('secretsmanager:') || a.startsWith('kms:') || a.startsWith('s3:'),
          ),
    );
    expect(others).toEqual([
      {
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [logicalId(synth.stack, fn.logGroupResource), 'Arn'] },
      },
      { Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Effect: 'Allow', Resource: '*' },
    ]);
  });

  it('grants no read-only route a write action anywhere', () => {
    const readOnly = routes.filter((r) => r.method === 'GET');
    expect(readOnly.length).toBeGreaterThan(0);
    for (const route of readOnly) {
      const roleId = logicalId(synth.stack, synth.stack.functions.get(route.operationId)!.executionRole);
      for (const grant of dynamoGrants(roleId).values()) {
        expect(
          [...grant.table].filter((a) => /Put|Update|Delete|Write/.test(a)),
          route.operationId,
        ).toEqual([]);
      }
    }
  });

  it("gives the void function exactly its writes on transactions, codes, counts and events and UpdateItem on the id counter (DeleteItem only on a multi-use code's holder records, no BatchWriteItem)", () => {
    const fn = synth.stack.functions.get('voidTransaction')!;
    const grants = dynamoGrants(logicalId(synth.stack, fn.executionRole));
    const byTable = Object.fromEntries([...grants].map(([table, grant]) => [table, [...grant.table].sort()]));
    expect(byTable).toEqual({
      [tableId('apiKeys')]: ['dynamodb:GetItem'],
      [tableId('counters')]: ['dynamodb:UpdateItem'],
      [tableId('posTransactions')]: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      [tableId('codes')]: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      [tableId('events')]: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      [tableId('promotionShards')]: ['dynamodb:UpdateItem'],
      [tableId('codeShards')]: ['dynamodb:UpdateItem'],
      [tableId('codeRedemptions')]: ['dynamodb:DeleteItem'],
      [tableId('customerUses')]: ['dynamodb:UpdateItem'],
    });
  });

  /**
   * A worker's role (functions/workers.ts) held to the same rule: on each table exactly the
   * actions its row declares; besides, only what its trigger needs (the stream's reads, the
   * queue's receive and delete), sending to the queues it names (and a stream's failure queue),
   * its own log group and X-Ray.
   */
  it.each(workers.map((worker) => [worker.name, worker] as const))('worker %s', (name, worker) => {
    const fn = synth.stack.workers.functions.get(name)!;
    const roleId = logicalId(synth.stack, fn.executionRole);
    expect(resources[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();
    const roleStatements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
    // Its keys: exactly the declared KMS actions, under each key's encryption context.
    expect(roleStatements.filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('kms:')))).toEqual(kmsStatements(worker.keys));
    expectKeyVariables(resources[logicalId(synth.stack, fn)]!.Properties.Environment.Variables, worker.keys);
    const statements = roleStatements
      .filter((statement: any) => ![statement.Action].flat().some((a: string) => a.startsWith('kms:')))
      .flatMap((statement: any) => [statement.Resource].flat().map((resource: any) => ({ actions: [statement.Action].flat() as string[], resource })));
    const queueArn = (queue: object) => ({ 'Fn::GetAtt': [logicalId(synth.stack, queue as never), 'Arn'] });

    const onTables = new Map<string, string[]>();
    const rest: { actions: string[]; resource: unknown }[] = [];
    for (const { actions, resource } of statements) {
      const [target, attribute] = (resource as any)['Fn::GetAtt'] ?? [];
      if (attribute === 'Arn' && resources[target]?.Type === 'AWS::DynamoDB::Table') {
        onTables.set(target, [...(onTables.get(target) ?? []), ...actions]);
      } else rest.push({ actions: [...actions].sort(), resource });
    }
    const declared = Object.entries(worker.tables) as [TableId, TableAccess][];
    expect(Object.fromEntries([...onTables].map(([table, actions]) => [table, actions.sort()]))).toEqual(
      Object.fromEntries(declared.map(([id, actions]) => [tableId(id), actions.map((a) => `dynamodb:${a}`).sort()])),
    );

    const trigger = worker.trigger;
    const expected: { actions: string[]; resource: unknown }[] = [
      { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resource: { 'Fn::GetAtt': [logicalId(synth.stack, fn.logGroupResource), 'Arn'] } },
    ];
    const sends = (worker.queues ?? []).map((queueId) => queueArn(synth.stack.workers.queues[queueId]));
    const send = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
    if (trigger.kind === 'stream') {
      expected.push(
        { actions: ['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'], resource: '*' },
        {
          actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
          resource: { 'Fn::GetAtt': [tableId(trigger.table), 'StreamArn'] },
        },
        ...[queueArn(synth.stack.workers.failureQueues.get(name)!), ...sends].map((resource) => ({ actions: send, resource })),
      );
    } else {
      expected.push({ actions: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], resource: '*' });
      const own = queueArn(synth.stack.workers.queues[trigger.queue]);
      const receive = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
      const sendsToOwn = (worker.queues ?? []).includes(trigger.queue);
      expected.push({ actions: sendsToOwn ? [...receive, 'sqs:SendMessage'].sort() : receive, resource: own });
      for (const resource of sends) if (JSON.stringify(resource) !== JSON.stringify(own)) expected.push({ actions: send, resource });
    }
    // A Query on a table is granted on its indexes too (writeExports pages the codes list's index).
    for (const [id, actions] of declared) {
      if (!actions.includes('Query')) continue;
      for (const index of specOf(id).indexes ?? []) {
        expected.push({ actions: ['dynamodb:Query'], resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [tableId(id), 'Arn'] }, `/index/${index.name}`]] } });
      }
    }
    // Its buckets: exactly the declared actions, on the bucket's objects only.
    for (const statement of bucketStatements(worker.buckets))
      expected.push({ actions: [statement.Action].flat().map(String).sort(), resource: statement.Resource });
    // A replay reads back the stream of each table it names: the two reads, on that stream only.
    for (const table of worker.streams ?? []) {
      expected.push({ actions: ['dynamodb:GetRecords', 'dynamodb:GetShardIterator'], resource: { 'Fn::GetAtt': [tableId(table), 'StreamArn'] } });
    }
    // Compared action by action: how CDK merges a role's statements is not the point.
    const pairs = (list: { resource: unknown; actions: string[] }[]) =>
      [...new Set(list.flatMap((s) => s.actions.map((action) => `${JSON.stringify(s.resource)} ${action}`)))].sort();
    expect(pairs(rest)).toEqual(pairs(expected));
  });
});

describe('the customer key: a generated Secrets Manager secret only the till functions read', () => {
  it('is one secret per entry of functions/secrets.ts, generated by Secrets Manager (no value in the template), retained, no physical name', () => {
    const found = ofType('AWS::SecretsManager::Secret');
    expect(found.map(([id]) => id)).toEqual(secretIds.map((id) => logicalId(synth.stack, synth.stack.secrets.byId[id])));
    const secret = resources[customerKeyId()]!;
    expect(secret.DeletionPolicy).toBe('Retain');
    expect(secret.UpdateReplacePolicy).toBe('Retain');
    expect(secret.Properties.SecretString).toBeUndefined();
    expect(secret.Properties.Name).toBeUndefined();
    // 64 characters of 0-9 a-f: 32 random bytes in the form the functions check.
    expect(secret.Properties.GenerateSecretString).toEqual({
      PasswordLength: 64,
      ExcludeUppercase: true,
      ExcludePunctuation: true,
      IncludeSpace: false,
      ExcludeCharacters: 'ghijklmnopqrstuvwxyz',
      RequireEachIncludedType: false,
    });
    expect(secret.Properties.KmsKeyId).toBeUndefined();
    expect(ofType('AWS::SecretsManager::RotationSchedule')).toEqual([]);
    expect(ofType('AWS::SecretsManager::ResourcePolicy')).toEqual([]);
  });

  it.each([
    ['customerKey', ['redeemCodes', 'validateCodes', 'voidTransaction']],
    ['cursorKey', ['listCodeGenerators', 'listCodeRedemptions', 'listCodes', 'listEvents', 'listWebhookDeliveries', 'listWebhookEndpoints']],
  ] as const)('%s is read by its functions (the till routes; the list routes), and by no other role of the stack', (secretId, expected) => {
    const secretRef = logicalId(synth.stack, synth.stack.secrets.byId[secretId]);
    const readers = routes.filter((route) => route.secrets?.includes(secretId)).map((route) => route.operationId);
    expect(readers.sort()).toEqual(expected);
    const readerRoles = readers.map((operationId) => logicalId(synth.stack, synth.stack.functions.get(operationId)!.executionRole)).sort();

    // Every statement of every policy of the template that names the secret, or a Secrets Manager action on it.
    const touching = ofType('AWS::IAM::Policy').flatMap(([, policy]) =>
      (policy.Properties.PolicyDocument.Statement as any[])
        .filter((statement) => JSON.stringify(statement).includes(secretRef))
        .map((statement) => ({ roles: policy.Properties.Roles.map((r: any) => r.Ref as string), statement })),
    );
    expect(touching.flatMap((t) => t.roles).sort()).toEqual(readerRoles);
    for (const { statement } of touching) {
      expect(statement).toEqual({ Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: { Ref: secretRef } });
    }
    // Every Secrets Manager statement of the template is one of the two secrets' GetSecretValue.
    const all = ofType('AWS::IAM::Policy').flatMap(([, policy]) =>
      (policy.Properties.PolicyDocument.Statement as any[]).filter((statement) => JSON.stringify(statement).includes('secretsmanager:')),
    );
    const refs = secretIds.map((id) => logicalId(synth.stack, synth.stack.secrets.byId[id]));
    for (const statement of all) expect(refs).toContain(statement.Resource.Ref);
    // No other role, inline or managed, names it.
    for (const [id, role] of ofType('AWS::IAM::Role')) expect(JSON.stringify(role.Properties), id).not.toContain('secretsmanager');
  });

  it("acknowledges cdk-nag's call for automatic rotation with the reason rotation is manual", () => {
    const acknowledged = synth.stack.secrets.byId.customerKey.node.metadata.filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY);
    // (CDK files it under its own prefix; the cdk-nag tests below prove it silences the rule.)
    const entries = acknowledged.flatMap((entry) => Object.entries(entry.data as Record<string, string>));
    expect(entries.map(([id, reason]) => [id.replace(/^Annotation::/, ''), reason])).toEqual([['AwsSolutions-SMG4', secrets.customerKey.rotation.whyManual]]);
  });

  it("is an output by its ARN, for the operator's rotation", () => {
    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.CustomerKeySecretArn!.Value).toEqual({ Ref: customerKeyId() });
  });
});

describe('tables', () => {
  it.each(tableIds.map((id) => [id] as const))('%s: on-demand, point-in-time recovery, deletion protection, retained, no physical name', (id) => {
    const spec = specOf(id);
    const table = resources[tableId(id)]!;
    expect(table.Type).toBe('AWS::DynamoDB::Table');
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
      SSESpecification: { SSEEnabled: true },
      KeySchema: [
        { AttributeName: spec.partitionKey.name, KeyType: 'HASH' },
        ...(spec.sortKey ? [{ AttributeName: spec.sortKey.name, KeyType: 'RANGE' }] : []),
      ],
    });
    expect(table.Properties.TableName).toBeUndefined();
    const ttl = spec.timeToLiveAttribute;
    if (ttl) {
      expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: ttl, Enabled: true });
    } else {
      expect(table.Properties.TimeToLiveSpecification).toBeUndefined();
    }
    const indexes = spec.indexes ?? [];
    // Each index holds exactly what its reader returns, nothing wider.
    expect((table.Properties.GlobalSecondaryIndexes ?? []).map((i: any) => [i.IndexName, i.Projection])).toEqual(
      indexes.map((i) => [i.name, { ProjectionType: 'INCLUDE', NonKeyAttributes: [...i.nonKeyAttributes] }]),
    );
  });

  it('creates exactly the tables of functions/tables.ts', () => {
    expect(ofType('AWS::DynamoDB::Table')).toHaveLength(tableIds.length);
  });
});

describe('APIs', () => {
  it('gives each host one stage with throttling, JSON access logs, metrics, no data tracing', () => {
    const stages = ofType('AWS::ApiGateway::Stage');
    expect(stages).toHaveLength(2);
    for (const [, stage] of stages) {
      expect(stage.Properties).toMatchObject({
        StageName: 'prod',
        TracingEnabled: true,
        MethodSettings: [
          {
            HttpMethod: '*',
            ResourcePath: '/*',
            ThrottlingRateLimit: 100,
            ThrottlingBurstLimit: 200,
            MetricsEnabled: true,
            DataTraceEnabled: false,
            LoggingLevel: 'ERROR',
          },
        ],
      });
      const format = JSON.parse(stage.Properties.AccessLogSetting.Format) as Record<string, string>;
      expect(format).toMatchObject({
        requestId: '$context.requestId',
        extendedRequestId: '$context.extendedRequestId',
        ip: '$context.identity.sourceIp',
        httpMethod: '$context.httpMethod',
        resourcePath: '$context.resourcePath',
        status: '$context.status',
        responseLatency: '$context.responseLatency',
        responseLength: '$context.responseLength',
        userAgent: '$context.identity.userAgent',
      });
      // A promotion code is worth money: the path as sent ($context.path) is never logged.
      expect(stage.Properties.AccessLogSetting.Format).not.toContain('$context.path');
      expect(Object.values(format)).not.toContain('$context.path');
      const destination = JSON.stringify(stage.Properties.AccessLogSetting.DestinationArn);
      const group = /"Ref":"([A-Za-z0-9]+)"/.exec(destination.replace('"Ref":"AWS::AccountId"', ''))?.[1];
      expect(resources[group!]!.Type).toBe('AWS::Logs::LogGroup');
    }
  });

  it('gives every log group a retention', () => {
    const groups = ofType('AWS::Logs::LogGroup');
    // a log group per function, plus access and execution logs per host
    expect(groups).toHaveLength(routes.length + workers.length + 2 * Object.keys(hosts).length);
    for (const [, group] of groups) expect(group.Properties.RetentionInDays).toBe(30);
  });

  it('leaves the account-level CloudWatch role alone by default', () => {
    expect(ofType('AWS::ApiGateway::Account')).toHaveLength(0);
    for (const [, api] of ofType('AWS::ApiGateway::RestApi')) expect(api.Properties.EndpointConfiguration.Types).toEqual(['REGIONAL']);
    const apigatewayRoles = ofType('AWS::IAM::Role').filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('apigateway.amazonaws.com'),
    );
    expect(apigatewayRoles).toHaveLength(0);
  });

  it('passes every request body to the functions as bytes (binaryMediaTypes */*)', () => {
    for (const host of Object.keys(hosts) as HostId[]) {
      expect(resources[apiId(host)]!.Properties.BinaryMediaTypes, host).toEqual(['*/*']);
    }
  });

  const GATEWAY_HEADERS = {
    'gatewayresponse.header.Content-Type': "'application/json; charset=utf-8'",
    'gatewayresponse.header.X-Content-Type-Options': "'nosniff'",
    'gatewayresponse.header.Cache-Control': "'no-store'",
    'gatewayresponse.header.X-Request-Id': 'context.requestId',
  };

  describe.each([
    ['core', (message: string) => ({ errors: [{ message }] })],
    [
      'pos',
      (message: string, id: string) => ({
        transaction: {
          errors: [{ message }],
          display_messages: [{ message, message_id: id, message_content: { request_id: '$context.requestId' }, priority: 1 }],
        },
      }),
    ],
  ] as const)("API Gateway's own errors on the %s host", (host, shape) => {
    const responses = () =>
      new Map(
        ofType('AWS::ApiGateway::GatewayResponse')
          .filter(([, r]) => r.Properties.RestApiId.Ref === apiId(host))
          .map(([, r]) => [r.Properties.ResponseType as string, r.Properties]),
      );

    it.each([
      ['MISSING_AUTHENTICATION_TOKEN', '404', 'No route for this method and path', 'not_found'],
      ['THROTTLED', '429', 'Too many requests; retry after the Retry-After delay', 'throttled'],
      ['REQUEST_TOO_LARGE', '413', 'Request body is too large', 'payload_too_large'],
      ['UNSUPPORTED_MEDIA_TYPE', '415', 'Content-Type must be application/json', 'unsupported_media_type'],
      ['DEFAULT_5XX', undefined, 'Internal server error; request id $context.requestId', 'internal_error'],
    ])('%s answers %s in the host error shape (undefined: API Gateway status kept)', (type, status, message, id) => {
      const response = responses().get(type)!;
      expect(response.StatusCode).toBe(status);
      expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual(shape(message, id));
      expect(response.ResponseParameters).toMatchObject(GATEWAY_HEADERS);
    });

    it("gives every gateway answer the functions' headers as far as a mapping can: no-store, and API Gateway's request id, never an echo of the caller's", () => {
      expect(responses().size).toBe(7);
      for (const [type, response] of responses()) {
        const headers = Object.fromEntries(
          Object.entries(response.ResponseParameters as Record<string, string>).filter(([name]) => name !== 'gatewayresponse.header.Retry-After'),
        );
        expect(headers, type).toEqual(GATEWAY_HEADERS);
        expect(JSON.stringify(response.ResponseParameters), type).not.toContain('method.request');
      }
    });

    it('passes API Gateway message through for the other 4xx, and asks throttled callers to wait', () => {
      const default4xx = responses().get('DEFAULT_4XX')!;
      const template = default4xx.ResponseTemplates['application/json'] as string;
      expect(template).toContain(':$context.error.messageString');
      expect(JSON.parse(template.replaceAll('$context.error.messageString', '"m"'))).toEqual(shape('m', 'request_rejected'));
      expect(responses().get('THROTTLED')!.ResponseParameters['gatewayresponse.header.Retry-After']).toBe("'1'");
    });
  });

  it('has no custom domain unless the context names one; base URLs are execute-api stage URLs', () => {
    expect(ofType('AWS::ApiGateway::DomainName')).toHaveLength(0);
    expect(ofType('AWS::ApiGateway::BasePathMapping')).toHaveLength(0);
    expect(ofType('AWS::Route53::RecordSet')).toHaveLength(0);
    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    for (const host of ['core', 'pos'] as const) {
      const value = JSON.stringify(outputs[`${host === 'core' ? 'Core' : 'Pos'}BaseUrl`]!.Value);
      expect(value).toContain(`{"Ref":"${apiId(host)}"}`);
      expect(value).toContain('.execute-api.');
      expect(value).toMatch(/\/prod"\]\]\}$/);
    }
  });
});

describe('on-call', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const dimensionRefs = (alarm: Record<string, any>): string[] => JSON.stringify(alarm).match(/"Ref":"[A-Za-z0-9]+"/g) ?? [];

  it('alarms on 5xx rate and p99 latency per API, errors and throttles per function, throttles and system errors per table', () => {
    // and the webhook alarms (test/infra/webhooks/stack.test.ts): attempts failing; dead letters of each queue, and its oldest
    // message where its row asks (test/infra/codes/issuance-finalisation.test.ts); and each stream worker's iterator age and
    // failure destination
    const streamWorkers = workers.filter((w) => w.trigger.kind === 'stream').length;
    const watchedQueues = queueIds.filter((id) => 'oldest' in queues[id].onCall).length;
    expect(alarms()).toHaveLength(
      2 * Object.keys(hosts).length + 2 * (routes.length + workers.length) + 2 * tableIds.length + 1 + queueIds.length + watchedQueues + 2 * streamWorkers,
    );
    const mentions = (id: string) => alarms().filter((a) => dimensionRefs(a).includes(`"Ref":"${id}"`));
    for (const host of Object.keys(hosts) as HostId[]) {
      const apiName = `tillgate-prod-${host}`;
      const onApi = alarms().filter((a) => JSON.stringify(a).includes(`"Value":"${apiName}"`));
      expect(onApi.map((a) => JSON.stringify(a.Metrics ?? a.MetricName)).join()).toMatch(/5XXError/);
      expect(onApi.some((a) => a.MetricName === 'Latency' && a.ExtendedStatistic === 'p99')).toBe(true);
    }
    for (const route of routes) {
      const names = mentions(functionId(route))
        .map((a) => a.MetricName)
        .sort();
      expect(names).toEqual(['Errors', 'Throttles']);
    }
    for (const id of tableIds) {
      const metrics = mentions(tableId(id)).map((a) => JSON.stringify(a.Metrics));
      expect(metrics).toHaveLength(2);
      expect(metrics.join()).toMatch(/ReadThrottleEvents/);
      expect(metrics.join()).toMatch(/SystemErrors/);
    }
  });

  it('says in every alarm description which dashboard and saved query to look at', () => {
    for (const alarm of alarms()) {
      const description = JSON.stringify(alarm.AlarmDescription);
      expect(description).toContain('dashboard tillgate-prod-');
      expect(description).toContain('tillgate-prod/errors-by-route');
      expect(description).toContain('tillgate-prod/request-by-x-request-id');
      // CloudWatch caps descriptions at 1024 characters; leave room for the region token.
      expect(description.length).toBeLessThan(950);
    }
  });

  it('has one dashboard covering both hosts, every function and every table', () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]![1].Properties.DashboardBody);
    for (const host of Object.keys(hosts)) expect(body).toContain(`tillgate-prod-${host}`);
    for (const route of routes) expect(body).toContain(functionId(route));
    for (const id of tableIds) expect(body).toContain(tableId(id));
    expect(synth.template.toJSON().Outputs.DashboardName).toBeDefined();
  });

  it('saves the Logs Insights queries of the runbook', () => {
    const queries = new Map(ofType('AWS::Logs::QueryDefinition').map(([, q]) => [q.Properties.Name as string, q.Properties]));
    expect([...queries.keys()].sort()).toEqual([
      'tillgate-prod/401s-by-source',
      'tillgate-prod/errors-by-route',
      'tillgate-prod/request-by-x-request-id',
      'tillgate-prod/slowest-requests',
      'tillgate-prod/webhook-deliveries-of-one-endpoint',
    ]);
    const functionLogGroups = [
      ...routes.map((r) => synth.stack.functions.get(r.operationId)!),
      ...workers.map((w) => synth.stack.workers.functions.get(w.name)!),
    ].map((fn) => logicalId(synth.stack, fn.logGroupResource));
    const byId = queries.get('tillgate-prod/request-by-x-request-id')!;
    expect(byId.QueryString).toContain('filter request_id = ');
    const accessLogGroups = (Object.keys(hosts) as HostId[]).map((host) => logicalId(synth.stack, synth.stack.apis[host].accessLogs));
    expect(byId.LogGroupNames).toEqual([...functionLogGroups, ...accessLogGroups].map((id) => ({ Ref: id })));
    expect(byId.QueryString).toContain('or requestId = ');
    expect(queries.get('tillgate-prod/slowest-requests')!.QueryString).toContain('sort latency_ms desc');
    expect(queries.get('tillgate-prod/errors-by-route')!.QueryString).toMatch(/stats count\(\*\) as errors.* by operation/);
    const unauthorized = queries.get('tillgate-prod/401s-by-source')!;
    expect(unauthorized.QueryString).toContain('filter status = 401');
    expect(unauthorized.QueryString).toMatch(/by ip/);
  });

  it('outputs both base URLs, every table name and the dashboard name', () => {
    const outputs = Object.keys(synth.template.toJSON().Outputs);
    expect(outputs).toEqual(
      expect.arrayContaining(['CoreBaseUrl', 'PosBaseUrl', 'DashboardName', ...tableIds.map((id) => `${id.charAt(0).toUpperCase()}${id.slice(1)}TableName`)]),
    );
    synth.template.hasOutput('ApiKeysTableName', { Value: { Ref: tableId('apiKeys') } });
  });
});

describe('cdk-nag', () => {
  it('finds nothing unacknowledged in the AwsSolutions and Serverless packs', () => {
    for (const pack of [new AwsSolutionsChecks(), new ServerlessChecks()]) {
      const report = pack.validateScope(synth.app);
      expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    }
  });

  it('would notice a finding (the check is not vacuous)', () => {
    const app = new App();
    const stack = new Stack(app, 'Probe');
    new Table(stack, 'Bare', { partitionKey: { name: 'id', type: AttributeType.STRING } });
    const ruleNames = new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName);
    expect(ruleNames).toContain('AwsSolutions-DDB3');
  });

  it('gives every acknowledgement a specific reason', () => {
    const acknowledgements: [string, string][] = [];
    const visit = (construct: IConstruct) => {
      for (const entry of construct.node.metadata) {
        if (entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY) {
          for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) acknowledgements.push([id, reason]);
        }
      }
      construct.node.children.forEach(visit);
    };
    visit(synth.app);
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const [id, reason] of acknowledgements) {
      expect(reason.length, id).toBeGreaterThanOrEqual(80);
    }
  });
});
