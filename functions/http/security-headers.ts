/**
 * The options of @middy/http-security-headers for both hosts: the chain (chain.ts) and the bench's
 * warm profile use these, so the profile measures what ships. An API answers JSON to machines: of
 * helmet's headers only those that mean something here.
 */
export const securityHeaders = {
  contentSecurityPolicy: false,
  crossOriginEmbedderPolicy: false,
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: false,
  dnsPrefetchControl: false,
  downloadOptions: false,
  originAgentCluster: false,
  permissionsPolicy: false,
  permittedCrossDomainPolicies: false,
  reportTo: false,
  reportingEndpoints: false,
  xssProtection: false,
  frameOptions: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true, preload: false },
  contentTypeOptions: { action: 'nosniff' },
} as const;
