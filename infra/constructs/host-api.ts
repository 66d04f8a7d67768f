import { Aws, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  BasePathMapping,
  DomainName,
  EndpointType,
  ContentHandling,
  LambdaIntegration,
  MockIntegration,
  PassthroughBehavior,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { gatewayErrorBody, gatewayErrors, METHOD_NOT_ALLOWED, methodsByPath, type GatewayError } from '../gateway-errors.ts';
import type { Host, Route } from '#functions/routes';
import type { CustomDomain } from '../config.ts';
import type { FunctionWithLogGroup } from './function-with-log-group.ts';

export interface HostApiProps {
  readonly host: Host;
  /** The rows of the route table that belong to this host. */
  readonly routes: readonly Route[];
  readonly functions: ReadonlyMap<string, FunctionWithLogGroup>;
  readonly stageName: string;
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  readonly domain?: CustomDomain;
  readonly webAclArn?: string;
}

/**
 * Fields of one access log line (JSON). The incoming X-Request-Id header is not available to
 * REST API access logs; `integrationRequestId` (the Lambda request id) joins a line to the
 * function's log, where `request_id` is the X-Request-Id. The path is logged as the resource
 * path only (`/v1.0/codegen/{id}/codes/{code}`), never `$context.path`: a promotion code is
 * worth money, and the path as sent may hold one (the function's log line has the ids).
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  responseLatency: '$context.responseLatency',
  responseLength: '$context.responseLength',
  integrationRequestId: '$context.integration.requestId',
  integrationStatus: '$context.integration.status',
  integrationLatency: '$context.integration.latency',
  errorResponseType: '$context.error.responseType',
  errorMessage: '$context.error.message',
  xrayTraceId: '$context.xrayTraceId',
} as const;

/**
 * Headers of every answer API Gateway gives itself, as close to the functions' as a gateway
 * response can get (see docs/api.md, "Answers the gateway gives itself"):
 * - X-Request-Id is API Gateway's request id (`context.requestId`, also sent as x-amzn-RequestId
 *   and logged as the access log's requestId). A mapping cannot check the caller's X-Request-Id
 *   against the functions' rule, so it is never echoed: echoing would repeat malformed ids and
 *   send none when the caller sent none.
 * - Cache-Control: no-store, like the functions' errors.
 */
function gatewayResponseHeaders(error: GatewayError): Record<string, string> {
  return {
    'Content-Type': "'application/json; charset=utf-8'",
    'X-Content-Type-Options': "'nosniff'",
    'Cache-Control': "'no-store'",
    'X-Request-Id': 'context.requestId',
    ...error.headers,
  };
}

/**
 * Every value is quoted, numbers included, so the format itself is valid JSON (cdk-nag
 * Serverless-APIGWStructuredLogging parses it) and a "-" for a missing value cannot break a line.
 * This is the shape of AWS's own JSON example; the saved queries filter `status` numerically.
 */
function accessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));
}

const constructIdFor = (type: string) =>
  type
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * One host: a REST API with one stage, the host's routes from the route table (Lambda proxy
 * integrations), JSON access logs, execution metrics, stage throttling, the host's error shape
 * on API Gateway's own responses, and an optional custom domain.
 */
export class HostApi extends Construct {
  readonly api: RestApi;
  readonly accessLogs: LogGroup;
  readonly executionLogs: LogGroup;
  /** `https://…` without a trailing slash: the custom domain, else the execute-api stage URL. */
  readonly baseUrl: string;
  readonly domain?: DomainName;

  constructor(scope: Construct, id: string, props: HostApiProps) {
    super(scope, id);
    const { host, stageName } = props;

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });

    this.api = new RestApi(this, 'Api', {
      restApiName: `tillgate-${stageName}-${host.id}`,
      description: `tillgate ${host.id} host (${host.versionPrefix}): ${host.description}`,
      endpointConfiguration: { types: [EndpointType.REGIONAL] },
      // The account-level CloudWatch role is a singleton; see TillgateStack (apiGatewayCloudWatchRole).
      cloudWatchRole: false,
      failOnWarnings: true,
      // Every body reaches the function base64-encoded, as the bytes the client sent: the function
      // counts its size on those bytes and refuses what is not UTF-8 (functions/http/body-bytes.ts)
      // instead of receiving text API Gateway has already decoded.
      binaryMediaTypes: ['*/*'],
      deployOptions: {
        stageName,
        throttlingRateLimit: props.throttleRateLimit,
        throttlingBurstLimit: props.throttleBurstLimit,
        metricsEnabled: true,
        // Execution logs at ERROR only; data tracing would log full requests, X-Auth-Token included.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: accessLogFormat(),
      },
    });

    // API Gateway writes execution logs to a group of this fixed name, created on first use with
    // no retention; creating it first gives it the stack's retention.
    this.executionLogs = new LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${stageName}`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.api.deploymentStage.node.addDependency(this.executionLogs);

    for (const route of props.routes) {
      const fn = props.functions.get(route.operationId);
      if (!fn) throw new Error(`No function for route ${route.operationId}`);
      const pathParameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const method = this.api.root.resourceForPath(route.path).addMethod(route.method, new LambdaIntegration(fn, { proxy: true, allowTestInvoke: false }), {
        operationName: route.operationId,
        authorizationType: AuthorizationType.NONE,
        requestParameters: Object.fromEntries(pathParameters.map((name) => [`method.request.path.${name}`, true])),
      });
      const reason =
        'The X-Auth-Token check lives in the Lambda middleware, not in an API Gateway authorizer: ' +
        'a token is hashed and looked up per account in the apiKeys DynamoDB table, a 401 must ' +
        "carry the host's own error body, and the same check runs on the local server and in the " +
        'end-to-end tests. An authorizer would be a second, untested implementation.';
      Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
      Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
    }

    this.addMethodNotAllowed(host);

    for (const error of gatewayErrors as readonly GatewayError[]) {
      this.api.addGatewayResponse(constructIdFor(error.type), {
        type: ResponseType.of(error.type),
        ...(error.statusCode ? { statusCode: String(error.statusCode) } : {}),
        responseHeaders: gatewayResponseHeaders(error),
        templates: { 'application/json': gatewayErrorBody(host.id, error.message, error.messageId) },
      });
    }

    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in the Lambda middleware against the OpenAPI-described schemas, ' +
        "because errors must use each host's own JSON error shape (422 with one entry per problem, " +
        'display messages on the pos host) and the same validation runs on the local server. An ' +
        'API Gateway request validator would answer 400 in its own shape.',
    });

    if (props.webAclArn) {
      new CfnWebACLAssociation(this, 'WebAcl', {
        resourceArn: this.api.deploymentStage.stageArn,
        webAclArn: props.webAclArn,
      });
    } else {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason:
          "The operator turned the stack's web ACL off (tokenRateLimitEnabled=false) and named none of " +
          'their own (webAclArn). Every request still needs a valid, scoped X-Auth-Token and the stage ' +
          'is throttled (throttleRateLimit/throttleBurstLimit), which bounds abuse and cost.',
      });
    }

    if (props.domain) {
      const domain = new DomainName(this, 'Domain', {
        domainName: props.domain.domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
      });
      new BasePathMapping(this, 'BasePathMapping', {
        domainName: domain,
        restApi: this.api,
        stage: this.api.deploymentStage,
      });
      if (props.domain.hostedZone) {
        const zone = HostedZone.fromHostedZoneAttributes(this, 'Zone', {
          hostedZoneId: props.domain.hostedZone.id,
          zoneName: props.domain.hostedZone.name,
        });
        new ARecord(this, 'AliasRecord', {
          zone,
          recordName: props.domain.domainName,
          target: RecordTarget.fromAlias(new ApiGatewayDomain(domain)),
        });
      }
      this.domain = domain;
      this.baseUrl = `https://${props.domain.domainName}`;
    } else {
      this.baseUrl = `https://${this.api.restApiId}.execute-api.${Aws.REGION}.${Stack.of(this).urlSuffix}/${stageName}`;
    }
  }

  /**
   * 405 for a known path and a method it does not serve, answered by API Gateway itself: an ANY
   * method with a mock integration on every resource of the route table (a resource's own methods
   * take precedence over ANY), with Allow, the functions' headers and the host's error body. No
   * function runs. Unknown paths have no resource and stay 404.
   */
  private addMethodNotAllowed(host: Host): void {
    const headers = (allow: readonly string[]) => ({
      'method.response.header.Allow': `'${allow.join(', ')}'`,
      'method.response.header.Content-Type': "'application/json; charset=utf-8'",
      'method.response.header.X-Content-Type-Options': "'nosniff'",
      'method.response.header.Cache-Control': "'no-store'",
      'method.response.header.X-Request-Id': 'context.requestId',
    });
    for (const [path, allow] of methodsByPath(host.id)) {
      const body = gatewayErrorBody(host.id, METHOD_NOT_ALLOWED.message('$context.httpMethod', allow), METHOD_NOT_ALLOWED.messageId);
      const integration = new MockIntegration({
        // Bodies are binary to this API (binaryMediaTypes */*): as text, the template applies. Any
        // other content type passes through (NEVER would answer 415); the one integration response
        // is the default, so the answer is 405 whatever the integration made of the request.
        contentHandling: ContentHandling.CONVERT_TO_TEXT,
        passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
        requestTemplates: { 'application/json': `{"statusCode": ${METHOD_NOT_ALLOWED.statusCode}}` },
        integrationResponses: [
          {
            statusCode: String(METHOD_NOT_ALLOWED.statusCode),
            responseParameters: headers(allow),
            responseTemplates: { 'application/json': body },
          },
        ],
      });
      const method = this.api.root.resourceForPath(path).addMethod('ANY', integration, {
        authorizationType: AuthorizationType.NONE,
        methodResponses: [
          {
            statusCode: String(METHOD_NOT_ALLOWED.statusCode),
            responseParameters: Object.fromEntries(Object.keys(headers(allow)).map((name) => [name, true])),
          },
        ],
      });
      const reason =
        'This ANY method only answers 405 with an Allow header from a mock integration, for the methods ' +
        'a path does not serve: it runs nothing and reads nothing, so there is nothing to authorise. The ' +
        "path's own methods (with the X-Auth-Token check in their functions) take precedence over it.";
      Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
      Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
    }
  }
}
