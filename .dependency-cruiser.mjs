/**
 * The rooms of src/ and which rooms each may import: docs/DEVELOPING.md's room map, checked. `npm test` runs it
 * (test/core/architecture.test.ts), which also checks that the map there lists exactly these rooms, each with
 * these imports, and that src/ holds no folder outside them. A room may always import its own files.
 */
export const ROOMS = {
  core: [],
  terminal: ['core'],
  store: ['core'],
  models: ['core'],
  pdf: ['core'],
  language: ['core'],
  auth: ['core', 'store'],
  mail: ['core', 'store'],
  access: ['auth', 'core', 'mail', 'store'],
  ingest: ['core', 'language', 'models', 'pdf', 'store'],
  documents: ['core', 'ingest', 'store'],
  sources: ['core', 'auth', 'documents', 'ingest', 'mail', 'store'],
  search: ['core', 'ingest', 'language', 'models', 'store'],
  web: ['core', 'auth', 'language', 'search'],
  mcp: ['core'],
  cli: ['core', 'mcp', 'terminal'],
  server: ['access', 'core', 'auth', 'documents', 'ingest', 'language', 'mail', 'mcp', 'models', 'pdf', 'search', 'sources', 'store', 'web'],
  admin: ['access', 'core', 'auth', 'ingest', 'language', 'mail', 'models', 'server', 'store', 'terminal'],
};

/** src/main.ts, the composition root: the commands of cli/ and admin/, and the server's option list for help. */
export const ROOT_IMPORTS = ['admin', 'cli', 'core', 'server', 'terminal'];
/** src/client-main.ts, the light client's root (docsearch-cli): no server code may reach its bundle. */
export const CLIENT_ROOT_IMPORTS = ['cli', 'core', 'mcp', 'terminal'];

const anyOf = (rooms) => `^src/(${rooms.join('|')})/`;

/**
 * Packages only one place may import: the store's engines stay behind the store, the HTTP stack in the server. The
 * S3 SDK has two: the library's own object storage, and the `s3` source kind, which reads someone else's bucket
 * (through the sources' SSRF-checked agents, with the source's own credentials: nothing of store/objects/ fits it).
 */
const PACKAGE_HOMES = [
  { packages: ['kysely', 'pg'], homes: ['store/sql/'], why: 'store/sql/ is the only code that writes SQL' },
  { packages: ['@lancedb/lancedb', 'apache-arrow'], homes: ['store/lancedb/'], why: 'store/lancedb/ is the only code that talks to LanceDB' },
  { packages: ['@aws-sdk', '@smithy'], homes: ['store/objects/', 'sources/kinds/s3\\.ts$'], why: 'store/objects/ talks to the library\'s object storage, sources/kinds/s3.ts reads a source\'s bucket; nothing else does' },
  { packages: ['koa', 'koa-body', '@koa/router', 'busboy'], homes: ['server/'], why: 'only the server speaks HTTP as a server' },
  { packages: ['otpauth', '@simplewebauthn/server'], homes: ['auth/'], why: 'auth/ is the only code that checks second factors' },
  { packages: ['uqr', 'bowser'], homes: ['web/'], why: 'QR codes and browser names are drawn by the pages only' },
  { packages: ['nodemailer'], homes: ['mail/'], why: 'mail/ is the one place that talks SMTP: everything else queues mail in the outbox' },
  { packages: ['openid-client', 'jose'], homes: ['auth/sso/'], why: 'auth/sso/ is the one OpenID Connect relying party: every check of a provider\'s answer (a logout token too) is made there' },
];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'an import circle: split the shared part into a file both import',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'a file nothing imports and that imports nothing: dead, or a worker entry named where it is started',
      from: { orphan: true, pathNot: '\\.d\\.ts$' },
      to: {},
    },
    ...Object.entries(ROOMS).map(([room, allowed]) => ({
      name: `room-${room}`,
      severity: 'error',
      comment: allowed.length ? `${room}/ imports only ${allowed.join(', ')}` : `${room}/ imports no other room`,
      from: { path: `^src/${room}/` },
      to: { path: '^src/', pathNot: anyOf([room, ...allowed]) },
    })),
    {
      name: 'room-main',
      severity: 'error',
      comment: `src/main.ts imports only ${ROOT_IMPORTS.join(', ')}`,
      from: { path: '^src/main\\.ts$' },
      to: { path: '^src/', pathNot: anyOf(ROOT_IMPORTS) },
    },
    {
      name: 'room-client-main',
      severity: 'error',
      comment: `src/client-main.ts imports only ${CLIENT_ROOT_IMPORTS.join(', ')}`,
      from: { path: '^src/client-main\\.ts$' },
      to: { path: '^src/', pathNot: anyOf(CLIENT_ROOT_IMPORTS) },
    },
    ...PACKAGE_HOMES.map(({ packages, homes, why }) => ({
      name: `package-home-${homes[0].replace(/\/$/, '').replace('/', '-')}`,
      severity: 'error',
      comment: why,
      from: { path: '^src/', pathNot: `^src/(${homes.join('|')})` },
      to: { path: `node_modules/(${packages.join('|')})/` },
    })),
    {
      name: 'no-dev-dependencies',
      severity: 'error',
      comment: 'the package ships without its devDependencies: src/ may name their types only',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/web/static/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
