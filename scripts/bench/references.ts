import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { BUNDLING } from '../../infra/constructs/function-with-log-group.ts';
import type { Plan } from './replay.ts';

/**
 * The cold-start references: one bundle per route whose bare handler replays, through a
 * DynamoDBDocumentClient, the DynamoDB requests the real handler made on a cold start (token
 * lookup included). Built by esbuild with the options every function is built with
 * (BUNDLING of infra/constructs/function-with-log-group.ts, translated as NodejsFunction does).
 */
function esbuildOptions(): BuildOptions {
  const bundling: typeof BUNDLING & { keepNames?: boolean; esbuildArgs?: Record<string, string | boolean> } = BUNDLING;
  // NodejsFunction passes esbuildArgs on the command line: `--minify-whitespace` is minifyWhitespace.
  const args = Object.fromEntries(
    Object.entries(bundling.esbuildArgs ?? {}).map(([flag, value]) => [flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()), value]),
  );
  return {
    bundle: true,
    format: BUNDLING.format as 'esm',
    target: BUNDLING.target,
    platform: BUNDLING.platform as 'node',
    mainFields: BUNDLING.mainFields,
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    banner: { js: BUNDLING.banner },
    external: BUNDLING.externalModules,
    logLevel: 'warning',
    ...(bundling.keepNames ? { keepNames: true } : {}),
    ...args,
  };
}

/** The minified build with runtime source maps, as deployed until the cold-start decision (docs/benchmarks.md). */
export const MINIFIED_BUILD: BuildOptions = {
  minify: true,
  minifyWhitespace: undefined,
  minifySyntax: undefined,
  minifyIdentifiers: undefined,
  keepNames: false,
};

/** Whitespace and syntax minified, identifiers kept: readable stack traces (the deployed build since the decision). */
export const READABLE_BUILD: BuildOptions = { minify: false, minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: false, keepNames: false };

/** One handler (or reference entry) built with the functions' options and `overrides`, for the variants. */
export async function buildVariant(entry: string, outfile: string, overrides: BuildOptions): Promise<string> {
  const options = { ...esbuildOptions(), ...overrides };
  for (const key of Object.keys(options) as (keyof BuildOptions)[]) if (options[key] === undefined) delete options[key];
  await build({ ...options, entryPoints: [resolve(ROOT, entry)], outfile, absWorkingDir: ROOT, metafile: true }).then((result) =>
    writeFileSync(`${outfile}.meta.json`, JSON.stringify(result.metafile)),
  );
  return outfile;
}

const ROOT = resolve(import.meta.dirname, '../..');

export async function buildReference(plan: Plan, outDir: string, overrides?: BuildOptions): Promise<string> {
  const dir = resolve(outDir, plan.operationId);
  mkdirSync(dir, { recursive: true });
  const commands = [...new Set(plan.steps.map((step) => step.command))].sort();
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
  writeFileSync(
    join(dir, 'entry.ts'),
    [
      `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';`,
      `import { DynamoDBDocumentClient, ${commands.join(', ')} } from '@aws-sdk/lib-dynamodb';`,
      `import { lambdaHandler } from ${JSON.stringify(join(ROOT, 'scripts/bench/replay.ts'))};`,
      `import plan from './plan.json' with { type: 'json' };`,
      `const endpoint = process.env.DYNAMODB_ENDPOINT;`,
      `const documents = DynamoDBDocumentClient.from(new DynamoDBClient(endpoint ? { endpoint } : {}), { marshallOptions: { removeUndefinedValues: true } });`,
      `export const handler = lambdaHandler(plan as any, { ${commands.join(', ')} }, (command) => documents.send(command));`,
      '',
    ].join('\n'),
  );
  const outfile = join(dir, 'index.mjs');
  if (overrides) return buildVariant(join(dir, 'entry.ts'), outfile, overrides);
  await build({ ...esbuildOptions(), entryPoints: [join(dir, 'entry.ts')], outfile, absWorkingDir: ROOT });
  return outfile;
}

/**
 * Rebuilds one real handler with esbuildOptions() and compares it with the bundle cdk synth made:
 * if they differ, the references are not built like the functions and the comparison is off.
 */
export async function sameBuildAsCdk(entry: string, cdkBundle: string, outDir: string): Promise<{ same: boolean; ours: number; cdk: number }> {
  const outfile = resolve(outDir, 'check', 'index.mjs');
  await build({ ...esbuildOptions(), entryPoints: [resolve(ROOT, entry)], outfile, absWorkingDir: ROOT });
  const ours = readFileSync(outfile);
  const cdk = readFileSync(cdkBundle);
  return { same: ours.equals(cdk), ours: statSync(outfile).size, cdk: statSync(cdkBundle).size };
}
