import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { addClient, authorizePath, getCode, loggedIn, pkce, post } from '../auth/oauth-flow.js';
import { browserLogin } from './browser-login.js';
import { cliEnv, cliSuite } from './cli-env.js';

const REDIRECT = 'http://127.0.0.1:9/cb';

describe('API keys after a browser login (issue 21, defect 2)', () => {
  let d: Daemon;
  let user: TestUser;
  cliSuite((s) => ({ d, user } = s));

  it('docsearch login asks for manage:keys, consent says so in words, and keys list/create/revoke work with that login', { timeout: 120_000 }, async () => {
    const env = cliEnv(null);
    const login = await browserLogin(d, user, env);
    expect(login.code, login.stderr).toBe(0);
    expect(login.consent).toContain('<li data-scope="manage:keys">List, create and revoke your API keys (only the docsearch command-line tool can ask for this)');
    const created = await runCli(['keys', 'create', '--name', 'from-cli', '--json'], { env });
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout);
    // The key holds document scopes only; manage:keys stays with the login.
    expect(key.scopes).toEqual(['read:documents', 'write:documents']);
    expect((await api(d, '/api/v1/me', { token: key.key })).body.scopes).toEqual(['read:documents', 'write:documents']);
    const list = await runCli(['keys', 'list', '--json', 'name'], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).keys.map((k: { name: string }) => k.name)).toContain('from-cli');
    const revoke = await runCli(['keys', 'revoke', 'from-cli', '--yes'], { env });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect((await api(d, '/api/v1/projects', { token: key.key })).status).toBe(401);
  });

  it('a browser login made without manage:keys is told how to fix it in one step', { timeout: 120_000 }, async () => {
    const env = cliEnv(null);
    const login = await browserLogin(d, user, env, ['--scope', 'read:documents write:documents']);
    expect(login.code, login.stderr).toBe(0);
    const res = await runCli(['keys', 'list'], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `error: your browser login to ${d.url} cannot manage API keys: it was made without the manage:keys scope\n` +
        `hint: run \`docsearch login\` again (it asks for manage:keys), or manage keys at ${d.url}/settings/keys\n`,
    );
  });

  it('a third-party client cannot get manage:keys: invalid_scope exactly as for an unknown scope, at authorize and at refresh', { timeout: 120_000 }, async () => {
    const app = await addClient(d, { name: 'Notes', redirectUris: [REDIRECT] });
    const web = await loggedIn(d, user);
    const asked = (scope: string) => web.get(authorizePath({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, scope, state: 's1' }));
    for (const [scope, named] of [['manage:keys', 'manage:keys'], ['read:documents manage:keys', 'manage:keys'], ['read:documents no:such', 'no:such']] as const) {
      const res = await asked(scope);
      expect(res.status, scope).toBe(302);
      const back = new URL(res.location!);
      expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'invalid_scope', error_description: `unknown scope: ${named} (supported: read:documents write:documents)`, state: 's1' });
    }
    // A public third-party client is refused the same way.
    const pub = await addClient(d, { name: 'Phone', redirectUris: [REDIRECT], public: true });
    const p = pkce();
    const res = await web.get(authorizePath({ response_type: 'code', client_id: pub.clientId, redirect_uri: REDIRECT, scope: 'manage:keys', code_challenge: p.challenge, code_challenge_method: 'S256' }));
    expect(new URL(res.location!).searchParams.get('error')).toBe('invalid_scope');

    // Its tokens still cannot touch keys, and a refresh cannot widen to manage:keys.
    const code = await getCode(web, { client_id: app.clientId, redirect_uri: REDIRECT });
    const token = await post(d, '/api/oauth/token', { grant_type: 'authorization_code', code, client_id: app.clientId, client_secret: app.clientSecret!, redirect_uri: REDIRECT });
    expect(token.body.scope).toBe('read:documents write:documents');
    const keys = await api(d, '/api/v1/keys', { token: token.body.access_token });
    expect(keys.status).toBe(403);
    expect(keys.body.error.message).toBe('API keys are managed with an API key or in Settings → API keys, not with an application’s access token');
    const widened = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: token.body.refresh_token, client_id: app.clientId, client_secret: app.clientSecret!, scope: 'read:documents manage:keys' });
    expect(widened.status).toBe(400);
    expect(widened.body.error).toBe('invalid_scope');
    // The metadata still advertises only the scopes every client may ask for.
    expect((await api(d, '/.well-known/oauth-authorization-server')).body.scopes_supported).toEqual(['read:documents', 'write:documents']);
  });

  it('an access token of the CLI narrowed by refresh to read:documents (without manage:keys) is refused keys', { timeout: 120_000 }, async () => {
    const env = cliEnv(null);
    expect((await browserLogin(d, user, env)).code).toBe(0);
    const file = join(env.XDG_CONFIG_HOME!, 'docsearch/credentials.json');
    const stored = JSON.parse(readFileSync(file, 'utf8')).servers[d.url];
    const narrowed = await post(d, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: stored.refresh_token, client_id: 'docsearch-cli', scope: 'read:documents' }, { as: 'form' });
    expect(narrowed.status).toBe(200);
    expect((await api(d, '/api/v1/keys', { token: narrowed.body.access_token })).status).toBe(403);
    writeFileSync(file, JSON.stringify({ servers: { [d.url]: { ...stored, access_token: narrowed.body.access_token, refresh_token: narrowed.body.refresh_token, scope: 'read:documents' } } }), { mode: 0o600 });
    expect((await runCli(['keys'], { env })).stderr).toContain('cannot manage API keys');
  });
});
