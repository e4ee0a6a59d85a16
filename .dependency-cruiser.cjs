// The direction of imports between the folders of src/ (docs/architecture.md), checked by
// `npm run lint`. Shared cores sit below the protocols and pages; nothing points back up.
const CORES =
  '(errors\\.ts|own-members\\.ts|lru\\.ts|log-format\\.ts|periodic\\.ts|http|db|config|keys|storage|bbs|mail|formats|status|clients|users|subclients|options|interaction|trust|telemetry|audit)';
const PROTOCOLS = '(oidc|credentials|oid4vp|oid4vci|verifier|issuer|federation|accounts|wallet|console)';
const TOP = '(app\\.ts|server\\.ts|main\\.ts|cli/|backup/|master-key/)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'Folders form no cycle: a change in one folder never has to travel round a loop.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-module-cycles',
      comment: 'Modules form no cycle either.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'cores-below-protocols',
      comment:
        'The shared cores (interaction, formats, status, storage, keys, db and the account folders) import no protocol, page or the composition root.',
      severity: 'error',
      from: { path: `^src/${CORES}` },
      to: { path: [`^src/${PROTOCOLS}/`, `^src/${TOP}`] },
    },
    {
      name: 'formats-free-of-status',
      comment:
        'Credential formats read status entries but never fetch or check lists (status/ sits above formats/).',
      severity: 'error',
      from: { path: '^src/formats/' },
      to: { path: '^src/status/' },
    },
    {
      name: 'interaction-imports-no-flow',
      comment: 'The interaction core knows no flow: each flow registers its kind (interaction-kinds.ts).',
      severity: 'error',
      from: { path: '^src/interaction/' },
      to: { path: [`^src/${PROTOCOLS}/`, '^src/(formats|status|storage)/'] },
    },
    {
      name: 'protocols-below-the-wallet-page',
      comment:
        'The wallet page sits on top; the store and the protocols are handed what it needs (recorders, notifiers).',
      severity: 'error',
      from: { path: '^src/(oidc|credentials|oid4vp|oid4vci|verifier|issuer)/' },
      to: { path: '^src/wallet/' },
    },
    {
      name: 'console-on-top',
      comment:
        'The console sits beside the wallet page, on the services: only the composition root and the CLI import it.',
      severity: 'error',
      from: { path: '^src/', pathNot: [`^src/${TOP}`, '^src/console/'] },
      to: { path: '^src/console/' },
    },
    {
      name: 'store-free-of-protocols',
      comment:
        "The credential store (the contract's store, list and proof) uses no OpenID4VP or OpenID4VCI code.",
      severity: 'error',
      from: { path: '^src/credentials/' },
      to: { path: '^src/(oid4vp|oid4vci)/' },
    },
    {
      name: 'oidc-free-of-credentials',
      comment: 'The OpenID Provider needs no credential code.',
      severity: 'error',
      from: { path: '^src/oidc/' },
      to: { path: '^src/(credentials|oid4vp|oid4vci|verifier|issuer|formats|status)/' },
    },
    {
      name: 'presentation-and-issuance-apart',
      comment: 'OpenID4VP and OpenID4VCI share cores, not each other.',
      severity: 'error',
      from: { path: '^src/(oid4vp|oid4vci)/' },
      to: { path: '^src/(oid4vp|oid4vci)/', pathNot: '^src/$1/' },
    },
    {
      name: 'issuer-apart',
      comment:
        'The issuer extends the OP (grants, DPoP) and signs with the shared formats and status cores; it uses no wallet-side protocol or the verifier.',
      severity: 'error',
      from: { path: '^src/issuer/' },
      to: { path: '^src/(credentials|oid4vp|oid4vci|verifier)/' },
    },
    {
      name: 'verifier-apart-from-the-wallet',
      comment:
        "Coffer's verifier and its hosted wallet meet only in the shared cores (formats, status): neither checks its own work.",
      severity: 'error',
      from: { path: '^src/verifier/' },
      to: { path: '^src/(oid4vp|oid4vci|credentials)/' },
    },
    {
      name: 'src-not-on-tests',
      comment: 'The product never imports its tests or benchmarks.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'resolvable',
      comment:
        "Every relative import names a file that exists (the benchmark anchor's harness in ../shared, beside the clone, is not the project's).",
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '(^|/)shared/bench/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|data|test-artifacts|scratch)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
