/**
 * What docs/sources.md promises an owner of a folder source, through the built daemon, the real CLI and the web:
 * a pass at once from the Sources tab's "Sync now"; held deletions confirmed by `sources sync --confirm` and by the Sources tab's "Remove these N"; a source paused by
 * its owner runs no pass until resumed; new globs (`sources edit --include`) remove, in the pass that starts at once,
 * the documents of the paths they leave out, and `--include ''` brings them back; an item over --max-upload-mb is an
 * item error while the others arrive; a failing source backs off no further than its schedule; a changed file whose
 * document is still being indexed is left to a pass within a minute; the kind comes from the URL unless `--kind`
 * says it.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient, type SourceWire } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { loggedIn } from '../server/web-client.js';

const MINUTE = 60_000;

describe('a folder source and its owner', () => {
  const dirs = tempDirs('docsearch-owner-actions');
  let root: string;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;
  let env: Record<string, string>;

  beforeAll(async () => {
    root = dirs.make('root');
    // One ingest worker: a document queued behind another is still being indexed when the next pass comes (with the
    // default 8 a small one is taken beside the long one, and may be ready before it).
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1', '--max-upload-mb', '1', '--sources-allow-private', '--ingest-workers', '1'] });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
    env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  function folder(name: string, files: Record<string, string | Buffer>): string {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    for (const [path, body] of Object.entries(files)) writeFileSync(join(dir, path), body);
    return dir;
  }

  /** A folder source of a new project, hourly, its first pass over and its `count` documents settled. */
  async function synced(name: string, files: Record<string, string | Buffer>, count = Object.keys(files).length) {
    const dir = folder(name, files);
    const project = await client.project(`owner ${name}`);
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    await client.passAfter(project, source.id, 0);
    await client.settled(project, source.id, count);
    return { dir, project, source };
  }

  const patch = (project: string, id: string, body: Record<string, unknown>) => api(d, `/api/v1/projects/${project}/sources/${id}`, { method: 'PATCH', token: user.apiKey, body });

  const notes = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`note-${String(i).padStart(2, '0')}.txt`, `Note ${i} about the plover number ${i * 11}.`]));

  it('confirms held deletions with `sources sync --confirm`, and with "Remove these N" on the Sources tab', async () => {
    const { dir, project, source } = await synced('held', notes(14));
    // 7 of 14 gone: held (more than 10 % and more than 5).
    for (let i = 0; i < 7; i++) rmSync(join(dir, `note-0${i}.txt`));
    expect((await client.sync(project, source.id)).held_deletions).toMatchObject({ count: 7 });
    const asked = Date.now();
    const confirmed = await runCli(['sources', 'sync', source.id, '--confirm', '--wait'], { env });
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stderr).toMatch(/finished: 7 listed, 0 added, 0 changed, 7 deleted, 7 unchanged/);
    expect((await client.passAfter(project, source.id, asked)).held_deletions).toBeNull();
    expect((await client.documents(project, source.id)).size).toBe(7);

    // 6 of the 7 left gone: held again, the confirmation spent.
    for (let i = 7; i < 13; i++) rmSync(join(dir, `note-${String(i).padStart(2, '0')}.txt`));
    expect((await client.sync(project, source.id)).held_deletions).toMatchObject({ count: 6 });
    const web = await loggedIn(d, user);
    const tab = await web.get(`/projects/${project}/sources`);
    expect(tab.text).toContain('Remove these 6');
    const clicked = Date.now();
    await web.submit(`/projects/${project}/sources/${source.id}/resume`, { _csrf: web.csrf });
    const removed = await client.passAfter(project, source.id, clicked);
    expect(removed).toMatchObject({ status: 'active', held_deletions: null, last_result: expect.objectContaining({ deleted: 6 }) });
    expect([...(await client.documents(project, source.id)).keys()]).toEqual(['note-13.txt']);
  }, 3 * MINUTE);

  it('runs a pass at once from the Sources tab\'s "Sync now"', async () => {
    const { dir, project, source } = await synced('sync-now', { 'first.txt': 'The first note, about shelducks.' });
    writeFileSync(join(dir, 'second.txt'), 'A second note, about wigeons.');
    const web = await loggedIn(d, user);
    expect((await web.get(`/projects/${project}/sources`)).text).toContain(`action="/projects/${project}/sources/${source.id}/sync"`);
    const asked = Date.now();
    const clicked = await web.submit(`/projects/${project}/sources/${source.id}/sync`, { _csrf: web.csrf });
    expect(clicked.text).toContain(`A pass of file://${dir} is due now.`);
    expect((await client.passAfter(project, source.id, asked)).last_result).toMatchObject({ added: 1, unchanged: 1 });
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['first.txt', 'second.txt']);
  }, 3 * MINUTE);

  it('pauses a source: no pass runs, asked for or due, until it is resumed', async () => {
    const { dir, project, source } = await synced('paused', { 'first.txt': 'The first note, about avocets.' });
    const paused = await patch(project, source.id, { status: 'paused' });
    expect(paused.body).toMatchObject({ status: 'paused', paused_reason: 'paused by its owner', next_sync: null });
    const before = (await client.get(project, source.id)).last_sync;
    writeFileSync(join(dir, 'second.txt'), 'A second note, about stilts.');
    const asked = await api(d, `/api/v1/projects/${project}/sources/${source.id}/sync`, { token: user.apiKey, body: {} });
    expect(asked.status).toBe(409);
    // A few scheduler turns (its schedule here may be as short as 1 s): no pass.
    expect((await patch(project, source.id, { every: '1s' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await client.get(project, source.id)).last_sync).toBe(before);
    expect([...(await client.documents(project, source.id)).keys()]).toEqual(['first.txt']);
    const resumedAt = Date.now();
    expect((await patch(project, source.id, { status: 'active', every: '1h' })).status).toBe(200);
    await client.passAfter(project, source.id, resumedAt);
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['first.txt', 'second.txt']);
  }, 3 * MINUTE);

  it('narrows to new globs in the pass that starts at once: what they leave out is removed, the rest keeps its ids; --include "" brings it back', async () => {
    const { project, source } = await synced('globs', { 'a.md': '# A\n\nAbout egrets.', 'b.txt': 'About bitterns.', 'c.md': '# C\n\nAbout cranes.' });
    const first = await client.documents(project, source.id);
    const asked = Date.now();
    const narrowed = await runCli(['sources', 'edit', source.id, '--include', '**/*.md', '--every', '2h'], { env });
    expect(narrowed.code, narrowed.stderr).toBe(0);
    expect(narrowed.stderr).toContain('its documents stay, and its next pass starts now');
    const after = await client.passAfter(project, source.id, asked);
    expect(after).toMatchObject({ every: '2h', options: { include: ['**/*.md'] }, last_result: expect.objectContaining({ deleted: 1, unchanged: 2 }) });
    const kept = await client.documents(project, source.id);
    expect([...kept.keys()].sort()).toEqual(['a.md', 'c.md']);
    expect(kept.get('a.md')!.id).toBe(first.get('a.md')!.id);
    const cleared = Date.now();
    const widened = await runCli(['sources', 'edit', source.id, '--include', ''], { env });
    expect(widened.code, widened.stderr).toBe(0);
    expect((await client.passAfter(project, source.id, cleared)).options).toEqual({});
    expect([...(await client.settled(project, source.id, 3)).keys()].sort()).toEqual(['a.md', 'b.txt', 'c.md']);
  }, 3 * MINUTE);

  it('holds what new globs would remove when that is more than the deletion guard allows', async () => {
    // A glob typed wrong must not empty a project: 7 of 8 left out is more than 10 % and more than 5.
    const { project, source } = await synced('narrow-held', { ...notes(7), 'keep.md': '# Keep\n\nAbout turnstones.' });
    const first = await client.documents(project, source.id);
    const asked = Date.now();
    expect((await patch(project, source.id, { options: { include: ['**/*.md'] } })).status).toBe(200);
    const held = await client.passAfter(project, source.id, asked);
    expect(held).toMatchObject({ status: 'paused', held_deletions: { count: 7 }, last_result: expect.objectContaining({ deleted: 0 }) });
    expect(held.paused_reason).toMatch(/7/);
    expect([...(await client.documents(project, source.id)).entries()].map(([path, x]) => [path, x.id]).sort()).toEqual([...first.entries()].map(([path, x]) => [path, x.id]).sort());
  }, 3 * MINUTE);

  it('takes the other items when one is larger than --max-upload-mb, which is an item error until it fits', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 'word ');
    const { dir, project, source } = await synced('large', { 'small.txt': 'A small note about terns.', 'big.txt': big }, 1);
    const s = await client.get(project, source.id);
    expect(s.last_result).toMatchObject({ failed: 1 });
    expect(s.item_errors).toEqual({ count: 1, items: [expect.objectContaining({ path: 'big.txt', error: 'larger than 1 MiB (--max-upload-mb)' })] });
    writeFileSync(join(dir, 'big.txt'), 'Now small enough, about skuas.');
    await client.sync(project, source.id);
    expect((await client.get(project, source.id)).item_errors?.count).toBe(0);
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['big.txt', 'small.txt']);
  }, 3 * MINUTE);

  it('retries a source it cannot read after 30 s, then 1, 2, 4 … minutes, never later than its schedule', async () => {
    const { dir, project, source } = await synced('failing', { 'only.txt': 'The only note, about gannets.' });
    expect((await patch(project, source.id, { every: '3m' })).status).toBe(200);
    renameSync(dir, `${dir}-away`);
    const retries: number[] = [];
    for (let i = 0; i < 4; i++) {
      const failed: SourceWire = await client.sync(project, source.id);
      expect(failed.status).toBe('error');
      expect(failed.error).toMatch(/failing cannot be read \(ENOENT\)/);
      retries.push(Math.round((Date.parse(String(failed.next_sync)) - Date.parse(String(failed.updated_at))) / 1000));
    }
    expect(retries).toEqual([30, 60, 120, 180]);
    expect((await client.documents(project, source.id)).size).toBe(1);
  }, 3 * MINUTE);

  it('leaves a changed file whose document is still being indexed to a pass within a minute, which takes it', async () => {
    const { dir, project, source } = await synced('deferred', { 'b-note.txt': 'The first text, about stints.' });
    // A long new file listed before the changed one keeps the one worker busy, so that the change waits in the queue.
    const long = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} tells of the sanderling flock number ${i * 17} on the northern shore.`).join('\n\n');
    writeFileSync(join(dir, 'a-long.txt'), long);
    writeFileSync(join(dir, 'b-note.txt'), 'The second text, about knots.');
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ added: 1, changed: 1 });
    writeFileSync(join(dir, 'b-note.txt'), 'The third text, about turnstones.');
    const deferred = await client.sync(project, source.id);
    expect(deferred.last_result).toMatchObject({ deferred: 1, changed: 0 });
    const wait = Date.parse(String(deferred.next_sync)) - Date.parse(String(deferred.last_sync));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(MINUTE);
    // Asked for once the indexer is free (not waited for: that pass is the one due within the minute).
    await client.settled(project, source.id, 2);
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ changed: 1, deferred: 0 });
    const docs = await client.settled(project, source.id, 2);
    expect(await client.found(project, 'turnstones')).toEqual(['b-note.txt']);
    expect(docs.get('b-note.txt')!.status).toBe('ready');
  }, 3 * MINUTE);

  it('takes the kind from the URL unless --kind says it', async () => {
    const project = await client.project('owner kinds');
    const kindOf = async (body: Record<string, unknown>) => {
      const added = await client.add(project, { every: '1h', ...body });
      await api(d, `/api/v1/projects/${project}/sources/${added.id}`, { method: 'DELETE', token: user.apiKey });
      return added.kind;
    };
    // Port 9 (discard) on loopback: nothing answers there, and nothing is fetched.
    expect(await kindOf({ url: `file://${folder('kinds', {})}` })).toBe('folder');
    expect(await kindOf({ url: 's3://bucket/prefix', options: { endpoint: 'http://127.0.0.1:9' } })).toBe('s3');
    expect(await kindOf({ url: 'imaps://127.0.0.1:9/INBOX', options: { username: 'invoices' } })).toBe('imap');
    expect(await kindOf({ url: 'imap://127.0.0.1:9/Invoices', options: { username: 'invoices' } })).toBe('imap');
    expect(await kindOf({ url: 'git://127.0.0.1:9/repo' })).toBe('git');
    expect(await kindOf({ url: 'http://127.0.0.1:9/team/docs.git' })).toBe('git');
    expect(await kindOf({ url: 'http://127.0.0.1:9/remote.php/dav/files/alice/Docs/' })).toBe('webdav');
    expect(await kindOf({ url: 'http://127.0.0.1:9/handbook/' })).toBe('web');
    const added = await runCli(['sources', 'add', 'owner kinds', 'http://127.0.0.1:9/handbook/', '--kind', 'webdav', '--json'], { env });
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ kind: 'webdav', url: 'http://127.0.0.1:9/handbook/' });
  }, 3 * MINUTE);
});
