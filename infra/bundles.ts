import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Maps each route's operationId to the handler bundle that `cdk synth` built, so the local
 * server can run the end-to-end suite against exactly what ships (TILLGATE_HANDLERS=bundles).
 *
 * Reads only the cloud assembly (manifest.json and the stack templates); it does not load
 * aws-cdk-lib and never synthesizes. Each function carries its operationId in the template
 * metadata key `tillgate:operationId` (see FunctionWithLogGroup), and its code asset directory in
 * `aws:asset:path` (falling back to the asset hash in the S3 key when asset metadata is off).
 */
export const OPERATION_METADATA_KEY = 'tillgate:operationId';

interface Manifest {
  readonly artifacts?: Record<string, { readonly type: string; readonly properties?: { readonly templateFile?: string } }>;
}

interface TemplateResource {
  readonly Type: string;
  readonly Metadata?: Record<string, unknown>;
  readonly Properties?: { readonly Code?: { readonly S3Key?: unknown } };
}

export function findBundles(cdkOutDir: string): Record<string, string> {
  const outDir = path.resolve(cdkOutDir);
  const manifestFile = path.join(outDir, 'manifest.json');
  if (!existsSync(manifestFile)) {
    throw new Error(`No cloud assembly at ${outDir}: run \`npm run synth\` first`);
  }
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  const bundles: Record<string, string> = {};

  for (const [artifactId, artifact] of Object.entries(manifest.artifacts ?? {})) {
    if (artifact.type !== 'aws:cloudformation:stack' || !artifact.properties?.templateFile) continue;
    const templateFile = path.join(outDir, artifact.properties.templateFile);
    const template = JSON.parse(readFileSync(templateFile, 'utf8')) as { Resources?: Record<string, TemplateResource> };

    for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const operationId = resource.Metadata?.[OPERATION_METADATA_KEY];
      if (typeof operationId !== 'string') continue;
      const assetDir = assetDirectory(resource);
      if (!assetDir) {
        throw new Error(`${artifactId}/${logicalId} (${operationId}): cannot tell which asset holds its code`);
      }
      const bundle = path.join(outDir, assetDir, 'index.mjs');
      if (!existsSync(bundle)) {
        throw new Error(`${artifactId}/${logicalId} (${operationId}): bundle ${bundle} is missing`);
      }
      if (bundles[operationId] && bundles[operationId] !== bundle) {
        throw new Error(`Operation ${operationId} appears in more than one stack of ${outDir}; synthesize one stage at a time`);
      }
      bundles[operationId] = bundle;
    }
  }
  return bundles;
}

function assetDirectory(resource: TemplateResource): string | undefined {
  const assetPath = resource.Metadata?.['aws:asset:path'];
  if (typeof assetPath === 'string') return assetPath;
  const key = resource.Properties?.Code?.S3Key;
  if (typeof key === 'string' && key.endsWith('.zip')) return `asset.${key.slice(0, -'.zip'.length)}`;
  return undefined;
}
