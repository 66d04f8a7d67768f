// The layering of functions/ (../docs/architecture.md, STYLE.md "The layout shows the architecture"),
// checked by `npm run lint`. Every arrow points down: declaration tables → nothing but each other;
// features → kernel (http → data → runtime); a feature reaches another only where a rule below allows it.
// Each rule was seen to fire on a violating import before it was committed (docs/testing.md, "Lint").
const TABLES = '^functions/(routes|workers|tables|queues|secrets|buckets)[.]ts$';
const FEATURES = '^functions/(codes|redemption|events|webhooks)/';
const KERNEL = '^functions/(http|runtime|data)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No circle: a module never imports, even through others, a module that imports it.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-not-features',
      severity: 'error',
      comment: 'The kernel (http, runtime, data) serves every feature and knows none of them.',
      from: { path: KERNEL },
      to: { path: FEATURES },
    },
    {
      name: 'data-below-http',
      severity: 'error',
      comment: 'A data module imports only the runtime, the declaration tables and other data modules: no data-access function knows about HTTP.',
      from: { path: '^functions/data/' },
      to: { path: '^functions/', pathNot: ['^functions/(data|runtime)/', TABLES] },
    },
    {
      name: 'runtime-at-the-bottom',
      severity: 'error',
      comment: 'The runtime (clients, configuration, deadline, observability) imports nothing from http, data or the features.',
      from: { path: '^functions/runtime/' },
      to: { path: '^functions/', pathNot: ['^functions/runtime/', TABLES] },
    },
    {
      name: 'feature-to-feature',
      severity: 'error',
      comment: 'A feature imports another only where a rule allows it: today only redemption uses codes (feature-redemption).',
      from: { path: '^functions/(codes|events|webhooks)/' },
      to: { path: FEATURES, pathNot: ['^functions/$1/'] },
    },
    {
      name: 'feature-redemption',
      severity: 'error',
      comment: 'Redemption reads the codes feature (code shapes, generator settings) and no other.',
      from: { path: '^functions/redemption/' },
      to: { path: '^functions/(events|webhooks)/' },
    },
    {
      name: 'production-reaches-no-tooling',
      severity: 'error',
      comment:
        'What ships (functions/) imports nothing from the local stack, scripts, tests, infra or the OpenAPI tooling: local hooks are injected at the edge.',
      from: { path: '^functions/' },
      to: { path: '^(local|scripts|test|infra|openapi|client|examples)/' },
    },
    {
      name: 'client-stands-alone',
      severity: 'error',
      comment:
        'The typed client (client/) is what an integrator copies: its generated types and openapi-fetch, nothing of the service, its tools or its tests.',
      from: { path: '^client/' },
      to: { path: '^(functions|local|scripts|test|infra|openapi|examples)/' },
    },
    {
      name: 'examples-use-the-client-only',
      severity: 'error',
      comment: 'An example (examples/) is a program an integrator could write: it imports the typed client and nothing else of the repository.',
      from: { path: '^examples/' },
      to: { path: '^(functions|local|scripts|test|infra|openapi)/' },
    },
    {
      name: 'client-for-tools-and-tests',
      severity: 'error',
      comment:
        "The client's callers in the repository are its tools (scripts/), its tests (test/) and the examples; the service and its stack never call themselves through it.",
      from: { path: '^(functions|local|infra|openapi)/' },
      to: { path: '^client/' },
    },
    {
      name: 'tables-declare-only',
      severity: 'error',
      comment:
        'The declaration tables (routes, workers, tables, queues, secrets) import only each other, the request schemas their rows carry, and types: infra and the local stack read them without loading a handler.',
      from: { path: TABLES },
      to: { path: '^functions/', pathNot: [TABLES, '^functions/http/schemas([.]ts$|/)'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'infra-reads-declarations',
      severity: 'error',
      comment:
        'infra/ builds the stack from the declaration tables and may use kernel types; it never loads a handler or feature module (bundles are built from the rows).',
      from: { path: '^infra/' },
      to: { path: '^functions/', pathNot: [TABLES], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'production-not-to-dev-dependencies',
      severity: 'error',
      comment: 'A Lambda bundle must not need a devDependency (type-only imports such as aws-lambda are erased).',
      from: { path: '^functions/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing (a misspelt #alias would otherwise pass unseen here).',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^cdk[.]out/', '^[.]local/', '^reports/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // package.json "imports" (#http/*, #data/*, …) resolve like Node resolves them.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mjs', '.js', '.cjs', '.json', '.d.ts'],
    },
    skipAnalysisNotInRules: true,
  },
};
