import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_DOC_PATH, renderConfigurationDoc } from '../../scripts/gen-config-docs.js';
import { ConfigError, DEFAULT_PORT, optionHelp, redactConfig, resolveConfig } from '../../src/server/config.js';
import { removeDir } from '../helpers/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'docsearch-config-'));
afterAll(() => removeDir(dir));

/** An environment with no config file in reach and no DOCSEARCH_* values. */
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ HOME: dir, XDG_CONFIG_HOME: join(dir, 'none'), XDG_DATA_HOME: join(dir, 'data'), ...extra });

function configFile(content: unknown): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('resolveConfig', () => {
  it('uses the defaults when nothing is given', () => {
    const c = resolveConfig({}, cleanEnv());
    expect(c.port).toBe(DEFAULT_PORT);
    expect(c.host).toBe('127.0.0.1');
    expect(c.logLevel).toBe('info');
    expect(c.trustProxy).toBe(false);
    expect(c.dataDir).toBe(join(dir, 'data', 'docsearch'));
    expect(c.modelCacheDir).toBe(join(dir, 'data', 'docsearch', 'models'));
    expect(c.publicUrl).toBeUndefined();
  });

  it('flags > environment > config file > defaults, option by option', () => {
    const file = configFile({ port: 1001, host: '0.0.0.0', 'log-level': 'warn', 'max-files': 7 });
    const env = cleanEnv({ DOCSEARCH_PORT: '2002', DOCSEARCH_HOST: '::1', DOCSEARCH_CONFIG: file });
    const c = resolveConfig({ port: '3003' }, env);
    expect(c.port).toBe(3003); // flag beats env and file
    expect(c.host).toBe('::1'); // env beats file
    expect(c.logLevel).toBe('warn'); // file beats default
    expect(c.maxFiles).toBe(7);
    expect(c.maxUploadMb).toBe(50); // default
    // commander hands over camelCase keys; an explicit --config beats DOCSEARCH_CONFIG.
    const other = configFile({ 'log-level': 'debug' });
    const d = resolveConfig({ trustProxy: true, dataDir: join(dir, 'x') }, env, other);
    expect(d.trustProxy).toBe(true);
    expect(d.logLevel).toBe('debug');
    expect(d.dataDir).toBe(join(dir, 'x'));
    expect(d.modelCacheDir).toBe(join(dir, 'x', 'models'));
  });

  it('an empty environment value counts as unset', () => {
    expect(resolveConfig({}, cleanEnv({ DOCSEARCH_PORT: '' })).port).toBe(DEFAULT_PORT);
  });

  it('reads the default config file under XDG_CONFIG_HOME when it exists', () => {
    const home = join(dir, 'xdg');
    mkdirSync(join(home, 'docsearch'), { recursive: true });
    writeFileSync(join(home, 'docsearch', 'config.json'), JSON.stringify({ port: 4004 }));
    expect(resolveConfig({}, cleanEnv({ XDG_CONFIG_HOME: home })).port).toBe(4004);
  });

  it('coerces types: ints, booleans, enums, paths', () => {
    const c = resolveConfig({}, cleanEnv({ DOCSEARCH_TRUST_PROXY: 'yes', DOCSEARCH_INGEST_WORKERS: ' 3 ', DOCSEARCH_DATA_DIR: 'rel/dir' }));
    expect(c.trustProxy).toBe(true);
    expect(c.ingestWorkers).toBe(3);
    expect(c.dataDir).toBe(join(process.cwd(), 'rel/dir'));
    expect(resolveConfig({}, cleanEnv({ DOCSEARCH_TRUST_PROXY: 'off' })).trustProxy).toBe(false);
  });

  it.each([
    [{ port: 'abc' }, {}, 'option "port" (from --port) must be an integer, got "abc"'],
    [{ port: '1.5' }, {}, 'option "port" (from --port) must be an integer, got "1.5"'],
    [{}, { DOCSEARCH_PORT: '65536' }, 'option "port" (from DOCSEARCH_PORT) must be between 0 and 65535, got 65536'],
    [{}, { DOCSEARCH_LOG_LEVEL: 'verbose' }, 'option "log-level" (from DOCSEARCH_LOG_LEVEL) must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'],
    [{}, { DOCSEARCH_TRUST_PROXY: 'maybe' }, 'option "trust-proxy" (from DOCSEARCH_TRUST_PROXY) must be true, false or a list of addresses: "maybe" is not an IP address or a CIDR range such as 10.0.0.0/24'],
    [{}, { DOCSEARCH_TRUST_PROXY: '10.0.0.5, 10.1.0.0/33' }, 'option "trust-proxy" (from DOCSEARCH_TRUST_PROXY) must be true, false or a list of addresses: "10.1.0.0/33" is not an IP address or a CIDR range such as 10.0.0.0/24'],
    [{ 'oidc-issuer': 'http://sso.example.org' }, { DOCSEARCH_OIDC_CLIENT_ID: 'docsearch' }, 'option "oidc-issuer" (from --oidc-issuer): must be an https URL (the provider signs people in: its answers must not travel in the clear)'],
    [{}, { DOCSEARCH_OIDC_ISSUER: 'https://sso.example.org' }, '--oidc-issuer needs --oidc-client-id (the client docsearch is registered as at the provider)'],
    [{ 'oidc-scopes': 'email profile' }, {}, 'option "oidc-scopes" (from --oidc-scopes): must include openid'],
    [{ 'password-login': 'off' }, {}, '--password-login off needs another way to sign in: --oidc-issuer or --trusted-header-login'],
    [{ 'trusted-header-login': true, 'trust-proxy': true }, {}, "--trusted-header-login needs --trust-proxy to list the proxy's addresses (e.g. --trust-proxy 10.0.0.5), so that no one else can send the sign-in headers"],
    [{ 'ingest-workers': '0' }, {}, 'option "ingest-workers" (from --ingest-workers) must be between 1 and 16, got 0'],
    [{ 'model-threads': '0' }, {}, 'option "model-threads" (from --model-threads) must be between 1 and 64, got 0'],
  ])('names the option and its source: %j %j', (flags, env, message) => {
    expect(() => resolveConfig(flags, cleanEnv(env))).toThrow(new ConfigError(message));
  });

  it('config file errors name the file and the key', () => {
    const bad = configFile({ port: 'eighty' });
    expect(() => resolveConfig({}, cleanEnv(), bad)).toThrow('option "port" (from config file) must be an integer, got "eighty"');
    const unknown = configFile({ prot: 1 });
    expect(() => resolveConfig({}, cleanEnv(), unknown)).toThrow(`config file ${unknown}: unknown option "prot"`);
    const notJson = configFile('{ port: 1');
    expect(() => resolveConfig({}, cleanEnv(), notJson)).toThrow(`config file ${notJson} is not valid JSON`);
    const arr = configFile([1]);
    expect(() => resolveConfig({}, cleanEnv(), arr)).toThrow(`config file ${arr} must hold a JSON object`);
    expect(() => resolveConfig({}, cleanEnv(), join(dir, 'missing.json'))).toThrow(`config file ${join(dir, 'missing.json')} does not exist`);
  });

  it('--trust-proxy takes true, false or the proxies\' addresses; the OpenID Connect settings come from DOCSEARCH_OIDC_*', () => {
    expect(resolveConfig({ trustProxy: '10.0.0.5, 10.1.0.0/16,::1' }, cleanEnv()).trustProxy).toBe('10.0.0.5, 10.1.0.0/16,::1');
    expect(resolveConfig({ trustProxy: 'on' }, cleanEnv()).trustProxy).toBe(true);
    const c = resolveConfig({}, cleanEnv({ DOCSEARCH_OIDC_ISSUER: 'https://10.0.0.9:8443/realms/acme', DOCSEARCH_OIDC_CLIENT_ID: 'docsearch', DOCSEARCH_OIDC_CLIENT_SECRET: 's3cret-value', DOCSEARCH_OIDC_GROUPS_CLAIM: 'realm_access.roles' }));
    expect([c.oidcIssuer, c.oidcClientId, c.oidcScopes, c.oidcGroupsClaim, c.passwordLogin]).toEqual(['https://10.0.0.9:8443/realms/acme', 'docsearch', 'openid email profile', 'realm_access.roles', 'on']);
    expect(redactConfig(c).oidcClientSecret).toBe('[redacted]');
  });

  it('masks secret options for logs', () => {
    const c = resolveConfig({}, cleanEnv({ DOCSEARCH_OPENAI_API_KEY: 'sk-very-secret' }));
    expect(c.openaiApiKey).toBe('sk-very-secret');
    const shown = redactConfig(c);
    expect(shown.openaiApiKey).toBe('[redacted]');
    expect(JSON.stringify(shown)).not.toContain('sk-very-secret');
  });

  it('every option has a DOCSEARCH_* variable and a description', () => {
    for (const o of optionHelp()) {
      expect(o.env).toMatch(/^DOCSEARCH_[A-Z0-9_]+$/);
      expect(o.description.length).toBeGreaterThan(10);
    }
  });
});

describe('docs/configuration.md', () => {
  it('is up to date with src/server/config.ts (run `npm run docs:config` to refresh)', () => {
    const committed = readFileSync(CONFIG_DOC_PATH, 'utf8');
    expect(committed, 'docs/configuration.md is stale: run `npm run docs:config`').toBe(renderConfigurationDoc());
    for (const o of optionHelp()) expect(committed).toContain(o.env);
  });
});

