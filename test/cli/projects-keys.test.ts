import { describe, expect, it } from 'vitest';
import { api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { cliEnv, cliSuite } from './cli-env.js';

describe('docsearch projects / keys against a daemon', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  cliSuite((s) => ({ d, user, env } = s));

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
    // Piped, the name column holds names only ("(default)" is for people on a terminal).
    expect(rows.map((r) => r[1])).toEqual(['default', 'handbook']);
    const row = rows[1]!;
    expect(row[0]).toBe(id);
    expect(row.slice(2, 4)).toEqual(['owner', user.email]);
    expect(row.slice(4, 7)).toEqual(['0', '0', '0']);
    expect(row[7]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

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
    expect(noYes.stderr).toBe('error: not on a terminal, so not asking: add --yes to delete project "Employee handbook" and its 0 documents\nhint: This cannot be undone.\n');
    expect((await api(d, `/api/v1/projects/${id}`, { token: user.apiKey })).status).toBe(200);
    // Its trash goes with it, which its document count leaves out: the question says so.
    const up = await uploadFiles(d, user.apiKey, [{ name: 'leave.txt', bytes: Buffer.from('Leave requests go to the team lead.\n') }], { projectId: id, query: '?wait=true' });
    expect((await api(d, `/api/v1/documents/${up.body.documents[0].id}`, { token: user.apiKey, method: 'DELETE' })).status).toBe(204);
    const withTrash = await cli(['projects', 'delete', id]);
    expect(withTrash.stderr).toBe('error: not on a terminal, so not asking: add --yes to delete project "Employee handbook" and its 0 documents and the 1 document in its trash\nhint: This cannot be undone.\n');

    const del = await cli(['projects', 'delete', 'Employee handbook', '--yes']);
    expect(del.code).toBe(0);
    expect((await api(d, `/api/v1/projects/${id}`, { token: user.apiKey })).status).toBe(404);
  });

  it('reports API refusals in one line with the server message in plain words', async () => {
    await cli(['projects', 'create', 'dup']);
    const res = await cli(['projects', 'create', 'DUP']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('error: a project named "DUP" already exists\n');
    // Was: "body.name: Too small: expected string to have >=1 characters".
    const empty = await cli(['projects', 'create', '']);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toBe('error: name: must not be empty\n');

    const missing = await cli(['projects', 'show', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`error: project "nope" not found on ${d.url}\nhint: see your projects with \`docsearch projects list\`\n`);

    const def = await cli(['projects', 'delete', 'default', '--yes']);
    expect(def.code).toBe(1);
    expect(def.stderr).toBe('error: the default project cannot be deleted\n');
  });

  it('a missing project is exit 1 with the same message from every command', async () => {
    const expected = `error: project "nope" not found on ${d.url}\nhint: see your projects with \`docsearch projects list\`\n`;
    const keys = async () => (await api(d, '/api/v1/keys', { token: user.apiKey })).body.keys.length as number;
    const keysBefore = await keys();
    for (const args of [
      ['projects', 'show', 'nope'],
      ['projects', 'rename', 'nope', 'other'],
      ['projects', 'delete', 'nope', '--yes'],
      ['projects', 'members', 'nope'],
      ['projects', 'share', 'nope', 'someone@example.com'],
      ['projects', 'settings', 'nope'],
      ['search', 'x', '--project', 'nope', '--json'],
      ['documents', 'list', '--project', 'nope'],
      ['keys', 'create', '--project', 'nope'],
      ['trash', 'list', '--project', 'nope'],
      ['sources', 'list', '--project', 'nope'],
    ]) {
      const res = await cli(args);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr, args.join(' ')).toBe(expected);
      expect(res.stdout, args.join(' ')).toBe('');
    }
    // The same error; the hint offers what upload can do about it.
    const upload = await cli(['upload', 'README.md', '--project', 'nope']);
    expect(upload.code).toBe(1);
    expect(upload.stderr).toBe(`error: project "nope" not found on ${d.url}\nhint: create it with \`docsearch projects create "nope"\`, or pass --create-project\n`);
    // Nothing was made on the way (keys create --project nope minted no key).
    expect(await keys()).toBe(keysBefore);
  });

  it('sources add and edit refuse a secret given with --option (docs: never taken from the command line): exit 2, its value never echoed, nothing added', async () => {
    const hint = (key: string) => `hint: give it on stdin instead: printf '%s\\n' "$SECRET" | docsearch sources … --secret ${key}\n`;
    const add = await cli(['sources', 'add', 'default', 'https://dav.example.com/files/', '--kind', 'webdav', '--option', 'username=al', '--option', 'password=hunter2']);
    expect(add.code).toBe(2);
    expect(add.stdout).toBe('');
    expect(add.stderr).toBe(`error: --option password=…: a secret is never taken from the command line\n${hint('password')}`);
    const s3 = await cli(['sources', 'add', 'default', 's3://bucket/docs/', '--option', 'access_key_id=AKIA1', '--option', 'secret_access_key=wJalr']);
    expect(s3.code).toBe(2);
    expect(s3.stderr).toBe(`error: --option secret_access_key=…: a secret is never taken from the command line\n${hint('secret_access_key')}`);
    const edit = await cli(['sources', 'edit', 'src_anything', '--option', 'password=hunter2']);
    expect(edit.code).toBe(2);
    expect(`${add.stderr}${s3.stderr}${edit.stderr}`).not.toMatch(/hunter2|wJalr/);
    expect(JSON.parse((await cli(['sources', 'list', '--json'])).stdout)).toEqual([]);
  });

  it('a typo in a verb is a usage error with a suggestion, not "too many arguments"', async () => {
    const res = await cli(['projects', 'lst']);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('error: unknown command "projects lst"\nhint: did you mean `docsearch projects list`?\n');
    const keys = await cli(['keys', 'revok', 'x']);
    expect(keys.code).toBe(2);
    expect(keys.stderr).toContain('did you mean `docsearch keys revoke`?');
  });

  it('a query over 2,000 characters is a usage error before anything is sent', async () => {
    const res = await runCli(['search', 'x'.repeat(2001)], { env: { ...env, DOCSEARCH_URL: 'http://127.0.0.1:9' } });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('error: the query is 2001 characters long; at most 2000 are allowed\nhint: search for the key sentence or words instead\n');
    // The API says the same in plain words (400 invalid_request).
    const direct = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'x'.repeat(2001) } });
    expect(direct.status).toBe(400);
    expect(direct.body.error).toMatchObject({ code: 'invalid_request', message: 'body.query: must be at most 2000 characters' });
  });

  it('--json f1,f2 selects fields of each item, --jq filters, and --json prints no notices', async () => {
    const fields = await cli(['projects', 'list', '--json', 'name,document_count']);
    expect(fields.code).toBe(0);
    expect(JSON.parse(fields.stdout).projects[0]).toEqual({ name: 'default', document_count: 0 });
    const jq = await cli(['projects', '--jq', '.projects[].name']);
    expect(jq.code).toBe(0);
    expect(jq.stdout.split('\n')).toContain('default');
    const both = await cli(['keys', 'list', '--json', 'id,name', '--jq', '[.keys[] | select(.name == "none")] | length']);
    expect(both.stdout).toBe('0\n');
    const bad = await cli(['projects', '--json', 'id,nam']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: unknown JSON field "nam"');
    const badJq = await cli(['projects', '--jq', '.[']);
    expect(badJq.code).toBe(2);
    expect(badJq.stderr).toMatch(/^error: --jq "\.\[": /);
    // `--json` then a word that is not a field list: the word stays an argument.
    const created = await cli(['projects', 'create', '--json', 'quiet-one']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).name).toBe('quiet-one');
    expect(created.stderr).toBe('');
  });

  it('usage errors exit 2', async () => {
    expect((await cli(['projects', 'create'])).code).toBe(2);
    const bad = await cli(['projects', 'create', 'x', '--metadata', '[1]']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`error: --metadata must be a JSON object\nhint: e.g. --metadata '{"team":"docs"}'\n`);
    const limit = await cli(['search', 'x', '--limit', '0']);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain("error: option '-n, --limit <n>' argument '0' is invalid. --limit must be an integer from 1 to 100000");
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
    expect(denied.stderr).toMatch(/^error: this credential lacks the write:documents scope\nhint: this credential lacks a scope/);

    const noYes = await cli(['keys', 'revoke', id]);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toBe(`error: not on a terminal, so not asking: add --yes to revoke API key ci (${row[2]})\nhint: Anything using it stops working.\n`);
    const revoked = await cli(['keys', 'revoke', 'ci', '--yes']);
    expect(revoked.code).toBe(0);
    expect(revoked.stderr).toBe(`revoked API key ${id} (${row[2]})\n`);
    expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(401);
  });

  it('keys revoke NAME with two keys of that name refuses, lists both ids, revokes nothing', async () => {
    const a = JSON.parse((await cli(['keys', 'create', '--name', 'twin', '--json'])).stdout);
    const b = JSON.parse((await cli(['keys', 'create', '--name', 'twin', '--json'])).stdout);
    const res = await cli(['keys', 'revoke', 'twin', '--yes']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('error: 2 API keys are named "twin":\n');
    expect(res.stderr).toContain(`  ${a.id}  `);
    expect(res.stderr).toContain(`  ${b.id}  `);
    expect(res.stderr).toContain('hint: revoke one by its id: `docsearch keys revoke <id>`\n');
    expect((await api(d, '/api/v1/projects', { token: a.key })).status).toBe(200);
    expect((await api(d, '/api/v1/projects', { token: b.key })).status).toBe(200);
    expect((await cli(['keys', 'revoke', a.id, '--yes'])).code).toBe(0);
  });

  it('keys create --expires 30d|DATE|never sets when a key expires; keys list shows it in EXPIRES and --json; bad values are refused', async () => {
    const DAY = 86_400_000;
    const month = await cli(['keys', 'create', '--name', 'monthly', '--expires', '30d']);
    expect(month.code).toBe(0);
    const monthly = JSON.parse((await cli(['keys', 'list', '--json'])).stdout).keys.find((k: { name: string }) => k.name === 'monthly');
    expect(month.stderr).toBe(`created API key ${monthly.id} (read:documents write:documents, expires ${monthly.expires_at}) — shown once, store it now:\n`);
    const lifetime = Date.parse(monthly.expires_at) - Date.parse(monthly.created_at);
    expect(lifetime).toBe(30 * DAY);
    expect(monthly.expired).toBe(false);

    const year = new Date().getUTCFullYear() + 1;
    const dated = JSON.parse((await cli(['keys', 'create', '--name', 'dated', '--expires', `${year}-01-31`, '--json'])).stdout);
    expect(dated).toMatchObject({ name: 'dated', expires_at: `${year}-01-31T00:00:00.000Z`, expired: false });
    const never = JSON.parse((await cli(['keys', 'create', '--name', 'lasting', '--expires', 'never', '--json'])).stdout);
    expect(never).toMatchObject({ expires_at: null, expired: false });

    // Piped: the EXPIRES column holds the exact moment, or nothing for a key that never expires.
    const rows = (await cli(['keys'])).stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    const row = (name: string) => rows.find((r) => r[1] === name)!;
    expect(row('dated')[7]).toBe(`${year}-01-31T00:00:00.000Z`);
    expect(row('lasting')[7]).toBe('');
    const fields = JSON.parse((await cli(['keys', 'list', '--json', 'name,expires_at,expired'])).stdout);
    expect(fields.keys.find((k: { name: string }) => k.name === 'dated')).toEqual({ name: 'dated', expires_at: `${year}-01-31T00:00:00.000Z`, expired: false });

    const badForm = await cli(['keys', 'create', '--name', 'bad', '--expires', '30x']);
    expect(badForm.code).toBe(2);
    expect(badForm.stderr).toContain("error: option '--expires <when>' argument '30x' is invalid. \"30x\" is not an expiry: give `30d` (days from now), a date such as 2027-01-31, an RFC 3339 timestamp, or `never`");
    const tooLong = await cli(['keys', 'create', '--name', 'bad', '--expires', '4000d']);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('"4000d" is out of range: a key lasts 1 to 3650 days');
    const past = await cli(['keys', 'create', '--name', 'bad', '--expires', '2020-01-01']);
    expect(past.code).toBe(1);
    expect(past.stderr).toMatch(/^error: the expiry 2020-01-01T00:00:00.000Z has already passed: give a moment in the future\n/);
    expect(JSON.parse((await cli(['keys', 'list', '--json'])).stdout).keys.map((k: { name: string }) => k.name)).not.toContain('bad');
  });
});
