/** An environment variable the client reads, declared once: `docsearch help environment` and docs/cli.md list these. */
export interface EnvironmentVariable {
  name: string;
  description: string;
}

/**
 * Every variable the client commands read (test/cli/environment.test.ts fails when src/cli reads one not listed).
 * The server's DOCSEARCH_* variables come from its option declarations (src/server/config.ts), passed in by main.ts.
 */
export const CLIENT_ENVIRONMENT: readonly EnvironmentVariable[] = [
  { name: 'DOCSEARCH_URL', description: 'the server to talk to, instead of --server (default: the server you last logged in to, else http://127.0.0.1:7411)' },
  { name: 'DOCSEARCH_TOKEN', description: 'an API key or access token to use instead of the stored login (CI); --token wins over it' },
  { name: 'DOCSEARCH_CREDENTIALS', description: 'where logins are kept: auto (the OS keychain, else a 0600 file), keychain, or file' },
  { name: 'XDG_CONFIG_HOME', description: 'the folder of client.json and credentials.json (default: ~/.config), under docsearch/' },
  { name: 'DOCSEARCH_TIMEOUT', description: "seconds a request waits for the server's answer before it fails as unanswered (default 120; 0: no limit); the file transfers of docsearch upload are not limited" },
  { name: 'DOCSEARCH_RETRY_FOR', description: 'seconds a request that may be sent twice is asked again once the server stops answering (502–504, a dropped connection) before it fails (default 60; 0: fail at once)' },
  { name: 'CI', description: 'when set, nothing prompts: deletes need --yes and login needs --with-token' },
  { name: 'NO_COLOR', description: 'no colour or emphasis (https://no-color.org)' },
  { name: 'FORCE_COLOR', description: 'colour and emphasis even through a pipe (non-empty, not 0 or false); so does CLICOLOR_FORCE' },
  { name: 'CLICOLOR_FORCE', description: 'as FORCE_COLOR' },
  { name: 'TERM', description: 'dumb turns colour off' },
  { name: 'HTTPS_PROXY', description: 'not used: the client connects to the server directly (nor are HTTP_PROXY and NO_PROXY); a server that cannot be reached while one is set says so in the hint' },
  { name: 'HTTP_PROXY', description: 'as HTTPS_PROXY: not used' },
  { name: 'COLUMNS', description: 'the width search results are wrapped to when stdout is not a terminal (default 80)' },
];

/**
 * Variables that change what the server computes only to measure it against a baseline (no flag, no config-file key):
 * never set for a library.
 */
export const BENCHMARK_ENVIRONMENT: readonly EnvironmentVariable[] = [
  {
    name: 'DOCSEARCH_ANALYSIS',
    description: 'english: the server analyses every chunk and query as English, without detecting languages (the baseline of `npm run bench:languages -- --english`)',
  },
];

/** The server's variables as its declarations describe them (flag, variable, description, default). */
export interface ServerVariable {
  env: string;
  flag: string;
  description: string;
  defaultText: string | undefined;
}

function rows(items: Array<[string, string]>): string[] {
  const width = Math.max(...items.map(([n]) => n.length));
  return items.map(([n, d]) => `  ${n.padEnd(width)}  ${d}`);
}

/** The text of `docsearch help environment`; `server` is undefined where only the client is installed (docsearch-cli). */
export function environmentHelp(server: readonly ServerVariable[] | undefined): string {
  return [
    'Environment variables',
    '',
    'Client commands (login, upload, search, projects, documents, keys, …):',
    ...rows(CLIENT_ENVIRONMENT.map((v) => [v.name, v.description])),
    '',
    ...(server
      ? [
          'The server (docsearch serve; each is also a flag and a config-file key; a flag wins over the variable):',
          ...rows(server.map((v) => [v.env, `${v.description} (${v.flag}${v.defaultText === undefined ? '' : `; default ${v.defaultText}`})`])),
        ]
      : ['The server: not installed here (docsearch-cli is the client only); `docsearch help environment` of the full docsearch package lists its variables.']),
    ...(server ? ['', 'For benchmarks only (never for a library):', ...rows(BENCHMARK_ENVIRONMENT.map((v) => [v.name, v.description]))] : []),
    '',
  ].join('\n');
}
