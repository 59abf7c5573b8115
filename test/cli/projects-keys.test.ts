import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { cliEnv } from './cli-env.js';

describe('docsearch projects / keys against a daemon', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
  }, { cleanExit: false });

  const cli = (args: string[], input?: string) => runCli(args, { env, input });

  it('creates, lists (tab-separated, RFC 3339), shows, renames and deletes a project', async () => {
    const created = await cli(['projects', 'create', 'handbook', '--description', 'HR docs', '--metadata', '{"team":"hr"}']);
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^prj_/);
    expect(created.stderr).toBe('created project handbook\n');

    const list = await cli(['projects']);
    expect(list.code).toBe(0);
    const rows = list.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => r[1])).toEqual(['default (default)', 'handbook']);
    const row = rows[1]!;
    expect(row[0]).toBe(id);
    expect(row.slice(2, 5)).toEqual(['0', '0', '0']);
    expect(row[5]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const json = await cli(['projects', 'list', '--json']);
    const api1 = await api(d, '/api/v1/projects?limit=100', { token: user.apiKey });
    expect(JSON.parse(json.stdout)).toEqual({ projects: api1.body.projects });

    const show = await cli(['--json', 'projects', 'show', 'HANDBOOK']);
    expect(JSON.parse(show.stdout)).toMatchObject({ id, name: 'handbook', description: 'HR docs', metadata: { team: 'hr' } });

    const renamed = await cli(['projects', 'rename', 'handbook', 'Employee handbook']);
    expect(renamed.code).toBe(0);
    expect(renamed.stderr).toBe('renamed project handbook to Employee handbook\n');

    const noYes = await cli(['projects', 'delete', id]);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toBe('error: Delete project "Employee handbook" and its 0 document(s): confirmation needed\nhint: add --yes to delete without a prompt\n');
    expect((await api(d, `/api/v1/projects/${id}`, { token: user.apiKey })).status).toBe(200);

    const del = await cli(['projects', 'delete', 'Employee handbook', '--yes']);
    expect(del.code).toBe(0);
    expect((await api(d, `/api/v1/projects/${id}`, { token: user.apiKey })).status).toBe(404);
  });

  it('reports API errors in one line with the server message and request id', async () => {
    await cli(['projects', 'create', 'dup']);
    const res = await cli(['projects', 'create', 'DUP']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: POST \/api\/v1\/projects: a project named "DUP" already exists \(request [0-9a-f-]{36}\)\n$/);

    const missing = await cli(['projects', 'show', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`error: project "nope" not found on ${d.url}\nhint: see your projects with \`docsearch projects list\`\n`);

    const def = await cli(['projects', 'delete', 'default', '--yes']);
    expect(def.code).toBe(1);
    expect(def.stderr).toMatch(/^error: DELETE \/api\/v1\/projects\/prj_\w+: the default project cannot be deleted \(request [0-9a-f-]{36}\)\n$/);
  });

  it('usage errors exit 2', async () => {
    expect((await cli(['projects', 'create'])).code).toBe(2);
    const bad = await cli(['projects', 'create', 'x', '--metadata', '[1]']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`error: --metadata must be a JSON object\nhint: e.g. --metadata '{"team":"docs"}'\n`);
    const limit = await cli(['search', 'x', '--limit', '500']);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain("error: option '-n, --limit <n>' argument '500' is invalid. --limit must be an integer from 1 to 100");
    const server = await runCli(['projects', '--server', 'ftp://example.com'], { env });
    expect(server.code).toBe(2);
    expect(server.stderr).toBe('error: invalid server URL "ftp://example.com": only http and https are supported\n');
  });

  it('creates a key (printed once), lists only prefix…last4, and revokes it', async () => {
    const created = await cli(['keys', 'create', '--name', 'ci', '--scopes', 'read:documents']);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^dsk_[0-9A-Za-z]{43}$/);
    expect(created.stderr).toMatch(/^created API key key_\w+ \(read:documents\) — shown once, store it now:\n$/);
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(200);

    const list = await cli(['keys']);
    expect(list.stdout).not.toContain(key);
    const row = list.stdout.split('\n').find((l) => l.includes('\tci\t'))!.split('\t');
    expect(row[2]).toBe(`${key.slice(0, row[2]!.indexOf('…'))}…${key.slice(-4)}`);
    expect(row[3]).toBe('read:documents');

    const json = JSON.parse((await cli(['keys', 'list', '--json'])).stdout);
    expect(JSON.stringify(json)).not.toContain(key);
    const id = json.keys.find((k: { name: string }) => k.name === 'ci').id;

    // The read-only key cannot create keys: 403 with the server's message.
    const denied = await runCli(['keys', 'create'], { env: { ...env, DOCSEARCH_TOKEN: key } });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^error: POST \/api\/v1\/keys: this credential lacks the write:documents scope \(request [0-9a-f-]{36}\)\nhint: this credential lacks a scope/);

    expect((await cli(['keys', 'revoke', id])).code).toBe(2);
    const revoked = await cli(['keys', 'revoke', 'ci', '--yes']);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toBe(`revoked API key ${id} (${row[2]})\n`);
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(401);
  });
});
