// The bundle of one handler by package (esbuild metafile, the functions' minified options): what
// its bytes are made of. `node scripts/bench/bundle-breakdown.mjs functions/events/get-event.ts [reference entry]`
import { build } from 'esbuild';
for (const entry of process.argv.slice(2)) {
  const opts = {
    bundle: true,
    format: 'esm',
    target: 'node24',
    platform: 'node',
    mainFields: ['module', 'main'],
    minify: true,
    metafile: true,
    write: false,
    absWorkingDir: new URL('../..', import.meta.url).pathname,
    entryPoints: [entry],
    outfile: '/tmp/x/index.mjs',
    logLevel: 'error',
  };
  const r = await build(opts);
  const out = Object.values(r.metafile.outputs).find((o) => o.entryPoint);
  const groups = {};
  const group = (p) => {
    if (/schemas\/[A-Za-z]+\.generated/.test(p)) return 'generated validators (functions/http/schemas)';
    if (p.startsWith('functions/')) return 'tillgate functions/ (other)';
    const m = p.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
    if (!m) return p;
    const pkg = m[1];
    if (
      pkg.startsWith('@aws-sdk/') ||
      pkg.startsWith('@smithy/') ||
      pkg.startsWith('@aws-crypto/') ||
      pkg === 'tslib' ||
      pkg === 'fast-xml-parser' ||
      pkg === 'strnum' ||
      pkg === 'bowser' ||
      pkg === '@aws/lambda-invoke-store'
    )
      return 'AWS SDK (client-dynamodb, lib-dynamodb, smithy)';
    if (pkg.startsWith('@aws-lambda-powertools/')) return `Powertools ${pkg.split('/')[1]}`;
    if (pkg.startsWith('@middy/')) return `middy ${pkg.split('/')[1]}`;
    if (pkg === 'ajv' || pkg === 'fast-deep-equal' || pkg === 'json-schema-traverse' || pkg === 'fast-uri' || pkg === 'require-from-string')
      return 'ajv runtime (+deps)';
    if (pkg === 'ajv-formats') return 'ajv-formats';
    return pkg;
  };
  let total = 0;
  for (const [p, v] of Object.entries(out.inputs)) {
    const g = group(p);
    groups[g] = (groups[g] || 0) + v.bytesInOutput;
    total += v.bytesInOutput;
  }
  const detail = {};
  for (const [p, v] of Object.entries(out.inputs)) {
    if (/ajv/.test(p)) {
      const k = p
        .replace(/.*node_modules\//, '')
        .split('/')
        .slice(0, 3)
        .join('/');
      detail[k] = (detail[k] || 0) + v.bytesInOutput;
    }
  }
  console.log(entry, 'total', (out.bytes / 1024).toFixed(1), 'KiB (inputs', (total / 1024).toFixed(1), ')');
  for (const [g, b] of Object.entries(groups).sort((a, b) => b[1] - a[1]))
    console.log(`  ${(b / 1024).toFixed(1).padStart(7)} KiB  ${((100 * b) / out.bytes).toFixed(1).padStart(5)} %  ${g}`);
  console.log(
    ' ajv detail:',
    Object.entries(detail)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([k, b]) => `${k} ${(b / 1024).toFixed(1)}`)
      .join('; '),
  );
}
