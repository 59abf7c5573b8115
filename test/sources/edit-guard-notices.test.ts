/**
 * Sources that can be edited and that call for help (issue 61 items 6 and 7), through the built daemon, a real
 * Apache WebDAV folder and the CLI:
 * - a WebDAV source's rotated password is entered again (`docsearch sources edit --secret`, the web's edit form)
 *   and its documents stay, ids and all; the password is never shown back nor logged;
 * - the deletion guard names the documents it holds (API, `sources show`, the Sources tab) and goes on adding and
 *   changing files while they wait; confirmed, exactly those go;
 * - the project's owners and editors (not its viewers) get a notice in the bell; Admin → Sources shows the state;
 * - what the source did is in the audit log `by: source`, with its id and URL;
 * - `docsearch sources list` fits 80 columns with the ID whole, and `--json` prints the list as gh does (Low 27).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, api, BIN, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';
import { missingFile } from '../helpers/requirement.js';
import { waitFor } from '../helpers/eventually.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { loggedIn } from '../server/web-client.js';

const MINUTE = 60_000;

interface WireEvent {
  type: string;
  by: string;
  actor: { email: string | null } | null;
  target: { id: string; label: string | null } | null;
  details: Record<string, unknown>;
}

describe.skipIf(apacheUnavailable() !== null || postfixUnavailable() !== null)('sources edited, guarded and calling for help', () => {
  const dirs = tempDirs('docsearch-sources-edit');
  let root: string;
  let apache: Apache;
  let postfix: Postfix;
  let d: Daemon;
  let admin: TestUser;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let client: SourceClient;

  beforeAll(async () => {
    root = dirs.make('root');
    [apache, postfix] = await Promise.all([startApache(), startPostfix()]);
    d = await startDaemon({ args: ['--smtp-url', postfix.url, '--public-url', 'http://docs.test.internal', '--source-roots', root, '--sources-min-interval', '1', '--sources-delete-guard-count', '2', '--sources-delete-guard-percent', '10', '--sources-allow-private'] });
    admin = await addUser(d);
    owner = await addUser(d);
    editor = await addUser(d);
    viewer = await addUser(d);
    client = new SourceClient(d, owner.apiKey);
  }, 2 * MINUTE);
  afterAll(async () => {
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    await apache?.stop();
    await postfix?.stop();
    dirs.removeAll();
  });

  const ownerEnv = () => cliEnv(d, { DOCSEARCH_TOKEN: owner.apiKey });
  const cli = (args: string[], input?: string) => runCli(args, { env: ownerEnv(), ...(input !== undefined ? { input } : {}) });
  const events = async (query: string): Promise<WireEvent[]> => {
    const res = await api(d, `/api/v1/audit-events${query}`, { token: admin.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.events as WireEvent[];
  };
  const share = async (project: string, who: TestUser, role: string) => {
    const res = await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { email: who.email, role } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };

  it("changes a WebDAV source's password without losing its documents; the password is never shown back", async () => {
    mkdirSync(join(apache.davDir, 'team'), { recursive: true });
    writeFileSync(join(apache.davDir, 'team', 'plan.txt'), 'The quarterly plan talks about lighthouses.');
    writeFileSync(join(apache.davDir, 'team', 'notes.md'), '# Notes\n\nMeeting notes about harbours.');
    apache.own(join(apache.davDir, 'team'));
    const project = await client.project('team folder');
    const source = await client.add(project, { kind: 'webdav', url: `${apache.davUrl}/team/`, options: { username: apache.davUser.name, password: apache.davUser.password } });
    await client.passAfter(project, source.id, 0);
    const before = await client.settled(project, source.id, 2);

    // The password at the server "changed": the source holds an old one (as after a rotation), its passes fail, and
    // nothing of the project is touched.
    const stale = await api(d, `/api/v1/projects/${project}/sources/${source.id}`, { method: 'PATCH', token: owner.apiKey, body: { options: { username: apache.davUser.name, password: 'an old password' } } });
    expect(stale.status).toBe(200);
    const failing = await client.sync(project, source.id);
    expect(failing.status).toBe('error');
    expect(failing.error).toMatch(/refused the credentials \(HTTP 401\)/);
    expect((await client.documents(project, source.id)).size).toBe(2);

    // `docsearch sources edit --secret password` with the new one, from stdin: the next pass lists everything unchanged.
    const edited = await cli(['sources', 'edit', source.id, '--secret', 'password'], `${apache.davUser.password}\n`);
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stderr).toContain('its documents stay');
    const healed = await client.passAfter(project, source.id, Date.now() - 1000);
    await expectHealed(project, source.id, healed);
    const after = await client.documents(project, source.id);
    expect([...after.values()].map((x) => [x.id, x.sha256]).sort()).toEqual([...before.values()].map((x) => [x.id, x.sha256]).sort());

    // The same through the web's edit form: the password field is empty (never shown back); left empty it keeps the
    // password; a new schedule and globs take effect.
    const web = await loggedIn(d, owner);
    const form = await web.get(`/projects/${project}/sources/${source.id}/edit`);
    expect(form.status).toBe(200);
    expect(form.text).not.toContain(apache.davUser.password);
    expect(form.text).toContain('Set, and never shown');
    const saved = await web.submit(`/projects/${project}/sources/${source.id}/edit`, { _csrf: web.csrf, every: '2h', include: '**/*.txt\n**/*.md', exclude: '', username: apache.davUser.name, secret_password: '' });
    expect(saved.text).toContain('its documents stay');
    const shown = await client.get(project, source.id);
    expect(shown).toMatchObject({ every: '2h', secrets: ['password'], options: { username: apache.davUser.name, include: ['**/*.txt', '**/*.md'] } });
    expect(JSON.stringify(shown)).not.toContain(apache.davUser.password);
    // Kept, not merely named: the next pass still gets in, and finds both files as they were.
    const kept = await client.sync(project, source.id);
    expect(kept.status, JSON.stringify(kept)).toBe('active');
    expect(kept.last_result).toMatchObject({ listed: 2, unchanged: 2, deleted: 0 });
    // Neither password is in the log, the one the failed pass used included.
    for (const secret of [apache.davUser.password, 'an old password']) expect(`${d.stdout()}${d.stderr()}`).not.toContain(secret);

    // Each change is audited with which credential changed, never its value.
    const changes = (await events(`?type=source.changed&target=${source.id}`)).map((e) => e.details);
    expect(changes.filter((c) => Array.isArray(c.credentials) && (c.credentials as string[]).includes('password'))).toHaveLength(2);
    expect(JSON.stringify(changes)).not.toContain(apache.davUser.password);
  }, 4 * MINUTE);

  async function expectHealed(project: string, sourceId: string, healed: Awaited<ReturnType<SourceClient['get']>>) {
    const s = healed.status === 'error' ? await client.sync(project, sourceId) : healed;
    expect(s.status).toBe('active');
    expect(s.last_result).toMatchObject({ added: 0, deleted: 0, unchanged: 2 });
  }

  it('names the documents the guard holds, keeps adding and changing files meanwhile, and tells the owners and editors', async () => {
    const dir = join(root, 'guarded');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 6; i++) writeFileSync(join(dir, `memo-${i}.txt`), `Memo ${i} about topic number ${i * 13}.`);
    const project = await client.project('guarded memos');
    await share(project, editor, 'editor');
    await share(project, viewer, 'viewer');
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    await client.passAfter(project, source.id, 0);
    const first = await client.settled(project, source.id, 6);

    // 4 of 6 gone at once (more than 2 and more than 10 %), one new file, one changed.
    for (const i of [0, 1, 2, 3]) rmSync(join(dir, `memo-${i}.txt`));
    writeFileSync(join(dir, 'memo-new.txt'), 'A new memo about kingfishers arrives while deletions wait.');
    writeFileSync(join(dir, 'memo-5.txt'), 'Memo 5 now speaks of cormorants instead.');
    const held = await client.sync(project, source.id);
    expect(held.status).toBe('paused');
    expect(held.last_result).toMatchObject({ added: 1, changed: 1, deleted: 0 });
    expect(held.held_deletions).toEqual({
      count: 4,
      items: [0, 1, 2, 3].map((i) => ({ path: `memo-${i}.txt`, document_id: first.get(`memo-${i}.txt`)!.id, filename: `memo-${i}.txt` })),
    });
    const docs = await client.settled(project, source.id, 7);
    expect(docs.get('memo-5.txt')!.id).toBe(first.get('memo-5.txt')!.id);
    expect(docs.get('memo-5.txt')!.sha256).not.toBe(first.get('memo-5.txt')!.sha256);

    // Another file while they still wait: it arrives too.
    writeFileSync(join(dir, 'memo-later.txt'), 'Yet another memo, about herons.');
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ added: 1, deleted: 0 });
    expect((await client.documents(project, source.id)).size).toBe(8);

    // The CLI names them; so does the Sources tab, each linking to its document.
    const show = await cli(['sources', 'show', source.id]);
    expect(show.code, show.stderr).toBe(0);
    for (const i of [0, 1, 2, 3]) expect(show.stdout).toContain(`would remove memo-${i}.txt`);
    const web = await loggedIn(d, owner);
    const tab = await web.get(`/projects/${project}/sources`);
    expect(tab.text).toContain('4 documents would be removed');
    expect(tab.text).toContain(`href="/documents/${first.get('memo-2.txt')!.id}"`);

    // The owner and the editor were told once (a bell with a count); the viewer was not.
    for (const who of [owner, editor]) {
      const page = await (await loggedIn(d, who)).get('/projects');
      expect(page.text, who.email).toMatch(/href="\/notices" class="bell unread">Notices <span class="badge warn" aria-label="1 unread">1<\/span>/);
    }
    // And each got one e-mail through the outbox (a real postfix), linking to the Sources tab; the viewer none. Their
    // mailboxes hold "New sign-in" notices too (the web sign-ins above, from a new browser), delivered in no set order.
    for (const who of [owner, editor]) {
      const mail = await postfix.waitFor(who.email, (m) => m.subject.startsWith('Source needs attention'));
      expect(mail.subject).toBe(`Source needs attention: file://${dir} in guarded memos`);
      expect(mail.text).toContain('4 documents would be removed');
      expect(mail.text).toContain(`http://docs.test.internal/projects/${project}/sources`);
    }
    const viewerWeb = await loggedIn(d, viewer);
    const viewerPage = await viewerWeb.get('/projects');
    expect(viewerPage.text).toContain('href="/notices" class="bell">Notices</a>');
    // A viewer is offered only what the role allows (issue 61 item 9): no Sources tab on the project, and in the
    // library no box to pick the project's documents for delete or move; the editor gets both.
    expect((await viewerWeb.get(`/projects/${project}`)).text).not.toContain(`href="/projects/${project}/sources"`);
    const viewerLibrary = (await viewerWeb.get(`/documents?project_id=${project}`)).text;
    expect(viewerLibrary).toContain(`data-document-id="${first.get('memo-4.txt')!.id}"`);
    expect(viewerLibrary).not.toContain('name="ids"');
    const editorWeb = await loggedIn(d, editor);
    expect((await editorWeb.get(`/projects/${project}`)).text).toContain(`href="/projects/${project}/sources"`);
    expect((await editorWeb.get(`/documents?project_id=${project}`)).text).toContain(`name="ids" value="${first.get('memo-4.txt')!.id}"`);
    const notices = await web.get('/notices');
    expect(notices.text).toContain('4 documents would be removed');
    expect(notices.text).toContain(`href="/projects/${project}/sources"`);
    await web.submit('/notices/read', { _csrf: web.csrf });
    expect(postfix.messages().filter((m) => m.to.includes(viewer.email))).toHaveLength(0);
    expect(postfix.messages().filter((m) => m.to.includes(owner.email) && m.subject.startsWith('Source needs attention'))).toHaveLength(1);
    expect((await web.get('/projects')).text).toContain('href="/notices" class="bell">Notices</a>');

    // Admin → Sources: the admin, no member of the project, sees its state, not its documents.
    const adminWeb = await loggedIn(d, admin);
    const adminPage = await adminWeb.get('/admin/sources');
    expect(adminPage.status).toBe(200);
    const row = new RegExp(`<tr data-source-id="${source.id}">([\\s\\S]*?)</tr>`).exec(adminPage.text)![1]!;
    expect(row).toContain('guarded memos');
    expect(row).toContain('4 documents held');
    expect(row).not.toContain('memo-2.txt');
    expect((await (await loggedIn(d, owner)).get('/admin/sources')).status).toBe(403);

    // Confirmed by resuming it (PATCH status active, as `sources resume` and the web do): a pass runs at once, and
    // exactly the held ones go, by the source, each with its id and URL in the audit log.
    const asked = Date.now();
    const resumed = await api(d, `/api/v1/projects/${project}/sources/${source.id}`, { method: 'PATCH', token: owner.apiKey, body: { status: 'active' } });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const confirmed = await client.passAfter(project, source.id, asked);
    expect(confirmed.status).toBe('active');
    expect(confirmed.held_deletions).toBeNull();
    expect(confirmed.last_result).toMatchObject({ deleted: 4 });
    expect([...(await client.documents(project, source.id)).keys()].sort()).toEqual(['memo-4.txt', 'memo-5.txt', 'memo-later.txt', 'memo-new.txt']);
    const deleted = (await events('?type=document.deleted&by=source')).filter((e) => e.details.source_id === source.id);
    expect(deleted.map((e) => e.target!.label).sort()).toEqual(['memo-0.txt', 'memo-1.txt', 'memo-2.txt', 'memo-3.txt']);
    expect(deleted[0]!.details.source_url).toBe(`file://${dir}`);
    const uploaded = (await events('?type=document.uploaded&by=source')).filter((e) => e.details.source_id === source.id);
    expect(uploaded).toHaveLength(8);
    expect(uploaded[0]!.details).toMatchObject({ source_url: `file://${dir}`, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await events('?type=document.replaced&by=source')).filter((e) => e.details.source_id === source.id).map((e) => e.target!.label)).toEqual(['memo-5.txt']);
  }, 4 * MINUTE);

  it('a source a quota pauses tells its owners and editors: a notice and one e-mail, not another while it stays unread', async () => {
    const dir = join(root, 'capped');
    mkdirSync(dir, { recursive: true });
    for (const name of ['a', 'b']) writeFileSync(join(dir, `${name}.txt`), `${`Capped memo ${name} about the budget of the harbour works. `.repeat(200)}`);
    const project = await client.project('capped memos');
    await share(project, editor, 'editor');
    await share(project, viewer, 'viewer');
    const set = await api(d, `/api/v1/admin/projects/${project}`, { token: admin.apiKey, method: 'PATCH', body: { quota_bytes: 16 * 1024 } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    const paused = await client.passAfter(project, source.id, 0);
    expect(paused.status).toBe('paused');
    expect(paused.paused_reason).toMatch(/^over the quota of the project capped memos/);
    for (const who of [owner, editor]) {
      const mail = await postfix.waitFor(who.email, (m) => m.subject === `Source needs attention: file://${dir} in capped memos`);
      expect(mail.text).toContain('paused, over the quota of the project capped memos');
      expect(mail.text).toContain(`http://docs.test.internal/projects/${project}/sources`);
    }
    const notices = await (await loggedIn(d, editor)).get('/notices');
    expect(notices.text).toContain('paused, over the quota of the project capped memos');
    // Resumed with the quota as it was: paused again, the unread notice updated, no second e-mail; the viewer none.
    const asked = Date.now();
    expect((await api(d, `/api/v1/projects/${project}/sources/${source.id}`, { method: 'PATCH', token: owner.apiKey, body: { status: 'active' } })).status).toBe(200);
    expect((await client.passAfter(project, source.id, asked)).status).toBe('paused');
    // The second pause was told (the log says so once it is), and queued no second e-mail: the outbox, where every
    // mail is queued before it is sent, holds one a person, and none for the viewer.
    const told = () => d.stdout().split('\n').filter((line) => line.includes('"source.alerted"') && line.includes(source.id)).length;
    await waitFor(async () => told() >= 2, 60_000, 'the second pause told');
    const outbox = await api(d, '/api/v1/admin/mail?limit=200', { token: admin.apiKey });
    expect(outbox.status, JSON.stringify(outbox.body)).toBe(200);
    const alerts = (outbox.body.mail as { kind: string; to: string; subject: string }[]).filter((m) => m.kind === 'source_alert' && m.subject.endsWith('in capped memos'));
    expect(alerts.map((m) => m.to).sort()).toEqual([owner.email, editor.email].sort());
    const capped = (m: { to: string; subject: string }) => m.subject.endsWith('in capped memos');
    expect(postfix.messages().filter((m) => capped(m) && m.to.includes(owner.email))).toHaveLength(1);
    expect(postfix.messages().filter((m) => capped(m) && m.to.includes(editor.email))).toHaveLength(1);
    expect(postfix.messages().filter((m) => capped(m) && m.to.includes(viewer.email))).toHaveLength(0);
  }, 2 * MINUTE);

  it.skipIf(missingFile('/usr/bin/script', 'apt-get install -y bsdutils') !== null)('lists sources in 80 columns with whole ids, and --json prints the list as gh does (Low 27)', async () => {
    const listed = await cli(['sources', 'list', '--json']);
    const sources = JSON.parse(listed.stdout) as { id: string; url: string }[];
    expect(Array.isArray(sources)).toBe(true);
    expect(sources.length).toBeGreaterThanOrEqual(2);
    const fields = JSON.parse((await cli(['sources', 'list', '--json', 'id,status'])).stdout);
    expect(Object.keys(fields[0]).sort()).toEqual(['id', 'status']);
    // On a terminal 80 columns wide: every id whole, nothing but the URL cut, no line wider than 80.
    // `script` (util-linux) gives the CLI a pseudo-terminal.
    const proc = spawn('script', ['-qefc', `${process.execPath} ${BIN} sources list`, '/dev/null'], { env: { ...process.env, ...ownerEnv(), COLUMNS: '80', CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stdin.end();
    expect(await new Promise<number | null>((r) => proc.once('exit', r))).toBe(0);
    const tty = { stdout: out.replace(/\r/g, '') };
    const lines = tty.stdout.split('\n').filter(Boolean);
    expect(lines[0]).toMatch(/^ID\s+PROJECT\s+URL\s+STATUS$/);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    for (const s of sources) expect(tty.stdout).toContain(s.id);
    expect(tty.stdout, tty.stdout).toMatch(/guarded memos\s+file:\/\/\S+\s+active/);
  });
});
