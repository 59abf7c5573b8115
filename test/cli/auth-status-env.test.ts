import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { cliEnv, cliSuite, unusedUrl } from './cli-env.js';

/** Every `env.NAME` / `env['NAME']` read in the source files below `dir`. */
function envReads(dir: string): Set<string> {
  const names = new Set<string>();
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.ts'))) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/\benv(?:\.|\[['"])([A-Z][A-Z0-9_]*)/g)) names.add(m[1]!);
  }
  return names;
}

describe('docsearch auth status and help environment (issue 21, missing 6)', () => {
  let d: Daemon;
  let user: TestUser;
  cliSuite((s) => ({ d, user } = s));

  it('help environment lists every variable the client reads and every DOCSEARCH_* the server reads, from their declarations', async () => {
    const res = await runCli(['help', 'environment'], { env: cliEnv(null) });
    expect(res.code).toBe(0);
    const listed = new Set([...res.stdout.matchAll(/^ {2}([A-Z][A-Z0-9_]*) /gm)].map((m) => m[1]!));
    for (const name of envReads(join(REPO, 'src/cli'))) expect(listed, name).toContain(name);
    for (const name of [...envReads(join(REPO, 'src'))].filter((n) => n.startsWith('DOCSEARCH_'))) expect(listed, name).toContain(name);
    expect(res.stdout).toMatch(/^ {2}DOCSEARCH_PORT +TCP port to listen on.*\(--port <n>; default 7411\)$/m);
    expect(listed).toContain('DOCSEARCH_INGEST_WORKERS');
    expect((await runCli(['--help'], { env: cliEnv(null) })).stdout).toContain('docsearch help environment');
  });

  it('auth status lists every saved login with its server and whether it still works; exit 1 when the active one does not', { timeout: 120_000 }, async () => {
    const env = cliEnv(null);
    // Two logins on this machine: a key that works, and one for a server that moved away; the last login is the default.
    const revoked = await addUser(d);
    const gone = await unusedUrl();
    expect((await runCli(['login', '--server', d.url, '--with-token'], { env, input: user.apiKey })).code).toBe(0);
    const file = join(env.XDG_CONFIG_HOME!, 'docsearch/credentials.json');
    const creds = JSON.parse(readFileSync(file, 'utf8'));
    creds.servers[gone] = { type: 'token', access_token: revoked.apiKey };
    writeFileSync(file, JSON.stringify(creds), { mode: 0o600 });

    const res = await runCli(['auth', 'status', '--json'], { env });
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.active_server).toBe(d.url);
    expect(out.logins).toEqual(
      [
        { server: d.url, active: true, source: 'file', method: 'API key', account: user.email, scopes: ['read:documents', 'write:documents'], status: 'ok', detail: null },
        { server: gone, active: false, source: 'file', method: 'API key', account: null, scopes: null, status: 'unreachable', detail: expect.stringContaining(`could not reach ${gone} (ECONNREFUSED)`) },
      ].sort((a, b) => a.server.localeCompare(b.server)),
    );
    const plain = await runCli(['auth'], { env });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(`${d.url} (active)\t${user.email}\tAPI key from file\tread:documents write:documents\tok\n`);

    // The active login revoked: it is reported as rejected and the exit code says so.
    const key = (await api(d, '/api/v1/keys', { token: user.apiKey })).body.keys.find((k: { name: string }) => k.name === 'provisioned');
    expect((await api(d, `/api/v1/keys/${key.id}`, { token: user.apiKey, method: 'DELETE' })).status).toBe(204);
    const after = await runCli(['auth', 'status', '--json'], { env });
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout).logins.find((l: { server: string }) => l.server === d.url).status).toBe('rejected');
    expect(after.stderr).toBe(`error: the login for ${d.url} does not work (rejected)\nhint: run \`docsearch login\` again\n`);

    // DOCSEARCH_TOKEN for the active server is listed first and wins over the saved login.
    const viaEnv = await runCli(['auth', 'status', '--json'], { env: { ...env, DOCSEARCH_TOKEN: revoked.apiKey } });
    expect(viaEnv.code).toBe(0);
    const rows = JSON.parse(viaEnv.stdout).logins;
    expect(rows[0]).toMatchObject({ server: d.url, active: true, source: 'DOCSEARCH_TOKEN', status: 'ok', account: revoked.email });
    expect(rows.filter((l: { active: boolean }) => l.active)).toHaveLength(1);

    expect((await runCli(['auth', 'status'], { env: cliEnv(null) })).code).toBe(4);
  });
});
