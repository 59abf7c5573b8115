/**
 * Files renamed or moved on a source with their bytes unchanged, through the built daemon and the `folder` kind: the
 * document follows the file (its name and source path are the new ones, in GET /documents/{id}, the list and search
 * results), keeps its id, and is not embedded again; and the cases beside it — moved to another folder, renamed only
 * in letter case, two files swapping names, an old name taken by a new file, one of two identical copies renamed or
 * deleted. The same against Apache's WebDAV (a listing of everything) and Git over http-backend (a listing of the
 * commit's changes: a rename is a file deleted and one added), and a page of a web site moved (its URL in the
 * document's metadata follows too).
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitWorkTree } from '../helpers/git-work.js';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { type DocWire, SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;
const NO_APACHE = apacheUnavailable();

describe('files renamed or moved on a source', () => {
  const dirs = tempDirs('docsearch-source-renames');
  let root: string;
  let d: Daemon;
  let token: string;
  let client: SourceClient;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1', '--sources-allow-private'] });
    token = (await addUser(d)).apiKey;
    client = new SourceClient(d, token);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  /** Writes `files` (path → text) under `dir`. */
  function write(dir: string, files: Record<string, string>): void {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  }

  /** A project with a source (`body`), its first pass settled with `count` documents. */
  async function withSource(name: string, body: Record<string, unknown>, count: number): Promise<{ project: string; source: string; docs: Map<string, DocWire> }> {
    const project = await client.project(name);
    const source = (await client.add(project, { ...body, every: '1h' })).id;
    expect((await client.passAfter(project, source, 0)).last_result).toMatchObject({ failed: 0 });
    const docs = await client.settled(project, source, count);
    return { project, source, docs };
  }

  /** A new folder under the root with `files` in it and a folder source on it, its first pass settled. */
  async function synced(name: string, files: Record<string, string>): Promise<{ dir: string; project: string; source: string; docs: Map<string, DocWire> }> {
    const dir = join(root, name);
    write(dir, files);
    // Files with the same bytes are one document.
    return { dir, ...(await withSource(name, { url: `file://${dir}` }, new Set(Object.values(files)).size)) };
  }

  /** Texts embedded for passages so far (a document indexed again adds to it). */
  async function embedded(): Promise<number> {
    const text = await (await fetch(`${d.url}/metrics`)).text();
    return Number(/^docsearch_embedded_texts_total\{kind="passage"\} (\S+)$/m.exec(text)?.[1] ?? 0);
  }

  /** The document as GET /documents/{id} shows it. */
  async function shown(id: string): Promise<DocWire> {
    const res = await api(d, `/api/v1/documents/${id}`, { token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as DocWire;
  }

  /** Every document of the project, as {filename, source_path}, by source path. */
  async function names(project: string): Promise<{ filename: string; source_path: string | null }[]> {
    return (await client.allDocuments(project)).map((x) => ({ filename: x.filename, source_path: x.source_path })).sort((a, b) => String(a.source_path).localeCompare(String(b.source_path)));
  }

  it('a file renamed with the same bytes: the same document under its new name and path, not embedded again', async () => {
    const { dir, project, source, docs } = await synced('renamed', { 'draft.txt': 'Field notes about oystercatchers on the mudflats.', 'other.txt': 'Another note, about redshanks.' });
    const before = docs.get('draft.txt')!;
    const embeddedBefore = await embedded();
    expect(embeddedBefore, 'the first pass embedded its passages').toBeGreaterThan(0);
    renameSync(join(dir, 'draft.txt'), join(dir, 'final.txt'));
    const pass = await client.sync(project, source);
    expect(pass.last_result).toMatchObject({ failed: 0 });

    const after = await shown(before.id);
    expect(after).toMatchObject({ id: before.id, sha256: before.sha256, filename: 'final.txt', source_path: 'final.txt', status: 'ready' });
    expect(await names(project)).toEqual([
      { filename: 'final.txt', source_path: 'final.txt' },
      { filename: 'other.txt', source_path: 'other.txt' },
    ]);
    expect(await client.found(project, 'oystercatchers')).toEqual(['final.txt']);
    // Nothing was indexed again: the document stayed ready, its passages were not embedded a second time.
    expect(await embedded()).toBe(embeddedBefore);
    // The next pass finds the file as it was recorded: nothing added, nothing gone.
    expect((await client.sync(project, source)).last_result).toMatchObject({ listed: 2, unchanged: 2, added: 0, changed: 0, deleted: 0 });
    expect((await shown(before.id)).filename).toBe('final.txt');
  }, 3 * MINUTE);

  it('a file moved to another folder, and one renamed only in letter case', async () => {
    const { dir, project, source, docs } = await synced('moved', { 'inbox/report.txt': 'A report on avocets nesting.', 'Notes.txt': 'Notes on little terns.' });
    const report = docs.get('inbox/report.txt')!;
    const notes = docs.get('Notes.txt')!;
    mkdirSync(join(dir, 'archive', '2026'), { recursive: true });
    renameSync(join(dir, 'inbox', 'report.txt'), join(dir, 'archive', '2026', 'report.txt'));
    renameSync(join(dir, 'Notes.txt'), join(dir, 'notes.txt'));
    expect((await client.sync(project, source)).last_result).toMatchObject({ failed: 0 });
    expect(await shown(report.id)).toMatchObject({ filename: 'report.txt', source_path: 'archive/2026/report.txt', sha256: report.sha256 });
    expect(await shown(notes.id)).toMatchObject({ filename: 'notes.txt', source_path: 'notes.txt', sha256: notes.sha256 });
    expect(await names(project)).toEqual([
      { filename: 'report.txt', source_path: 'archive/2026/report.txt' },
      { filename: 'notes.txt', source_path: 'notes.txt' },
    ]);
    expect(await client.found(project, 'terns')).toEqual(['notes.txt']);
  }, 3 * MINUTE);

  it('two files swapping names in one pass: each document follows its bytes, neither embedded again', async () => {
    const { dir, project, source, docs } = await synced('swapped', { 'a.txt': 'The first text, about whimbrels.', 'b.txt': 'The second text, about godwits.' });
    const [a, b] = [docs.get('a.txt')!, docs.get('b.txt')!];
    const embeddedBefore = await embedded();
    renameSync(join(dir, 'a.txt'), join(dir, 'tmp'));
    renameSync(join(dir, 'b.txt'), join(dir, 'a.txt'));
    renameSync(join(dir, 'tmp'), join(dir, 'b.txt'));
    expect((await client.sync(project, source)).last_result).toMatchObject({ failed: 0, deleted: 0 });
    expect(await shown(a.id)).toMatchObject({ sha256: a.sha256, filename: 'b.txt', source_path: 'b.txt', status: 'ready' });
    expect(await shown(b.id)).toMatchObject({ sha256: b.sha256, filename: 'a.txt', source_path: 'a.txt', status: 'ready' });
    expect((await client.allDocuments(project)).map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
    // The first file listed took the other's document; its own, left without a file for a moment, is not in the trash.
    const trash = await api(d, `/api/v1/trash?project_id=${project}`, { token });
    expect(trash.status, JSON.stringify(trash.body)).toBe(200);
    expect(trash.body.documents).toEqual([]);
    expect(await client.found(project, 'whimbrels')).toEqual(['b.txt']);
    expect(await client.found(project, 'godwits')).toEqual(['a.txt']);
    expect(await embedded()).toBe(embeddedBefore);
    expect((await client.sync(project, source)).last_result).toMatchObject({ unchanged: 2, added: 0, changed: 0, deleted: 0 });
  }, 3 * MINUTE);

  it("a file renamed and a new file under its old name in the same pass: each name shows its own text", async () => {
    // The new name sorts after the old one (listed after it) in one folder, before it in the other.
    for (const [name, renamed] of [['reused-later', 'zz-kept.txt'], ['reused-earlier', '00-kept.txt']] as const) {
      const { dir, project, source, docs } = await synced(name, { 'log.txt': 'The log of the first week, about curlews.' });
      const first = docs.get('log.txt')!;
      renameSync(join(dir, 'log.txt'), join(dir, renamed));
      writeFileSync(join(dir, 'log.txt'), 'The log of the second week, about plovers.');
      expect((await client.sync(project, source)).last_result, name).toMatchObject({ failed: 0 });
      const now = await waitFor(async () => {
        const all = await client.allDocuments(project);
        return all.length === 2 && all.every((x) => x.status === 'ready') && all;
      }, 120_000, 'two documents ready');
      expect(await names(project), name).toEqual(
        [
          { filename: renamed, source_path: renamed },
          { filename: 'log.txt', source_path: 'log.txt' },
        ].sort((x, y) => x.source_path.localeCompare(y.source_path)),
      );
      const kept = now.find((x) => x.source_path === renamed)!;
      expect(kept.sha256, name).toBe(first.sha256);
      // Listed before the old name, the new path finds the document of its bytes, which follows it. (Listed after
      // it, the old name's new bytes have replaced that document in place by then, and the renamed bytes are indexed
      // anew: nothing tells the pass, when it reaches the old name, that its bytes are still to come.)
      if (renamed < 'log.txt') expect(kept.id, name).toBe(first.id);
      await waitFor(async () => (await client.found(project, 'plovers')).length === 1, 60_000, 'the new text searchable');
      expect(await client.found(project, 'plovers'), name).toEqual(['log.txt']);
      expect(await client.found(project, 'curlews'), name).toEqual([renamed]);
      expect((await client.sync(project, source)).last_result, name).toMatchObject({ unchanged: 2, added: 0, changed: 0, deleted: 0 });
    }
  }, 5 * MINUTE);

  it('one of two identical copies renamed, then one deleted: the one document is named after a file that is there', async () => {
    const same = 'The same page twice, about sanderlings.';
    const { dir, project, source, docs } = await synced('copies', { 'a-copy.txt': same, 'b-copy.txt': same });
    const [doc] = [...docs.values()];
    expect(doc!.source_path).toBe('a-copy.txt');
    renameSync(join(dir, 'a-copy.txt'), join(dir, 'c-copy.txt'));
    expect((await client.sync(project, source)).last_result).toMatchObject({ failed: 0, deleted: 1 });
    const renamed = await shown(doc!.id);
    expect(renamed).toMatchObject({ sha256: doc!.sha256, status: 'ready' });
    // Either file it is now (b-copy.txt or c-copy.txt), not the one that is gone.
    expect(['b-copy.txt', 'c-copy.txt']).toContain(renamed.source_path);
    expect(renamed.filename).toBe(renamed.source_path);
    expect((await client.allDocuments(project)).map((x) => x.id)).toEqual([doc!.id]);

    rmSync(join(dir, renamed.source_path!));
    expect((await client.sync(project, source)).last_result).toMatchObject({ failed: 0, deleted: 1, unchanged: 1 });
    const left = renamed.source_path === 'b-copy.txt' ? 'c-copy.txt' : 'b-copy.txt';
    expect(await shown(doc!.id)).toMatchObject({ filename: left, source_path: left, sha256: doc!.sha256 });
    expect(await client.found(project, 'sanderlings')).toEqual([left]);
  }, 3 * MINUTE);

  it('a file renamed in a pass whose deletions the guard holds: the document follows once they are confirmed', async () => {
    const files = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`old-${i}.txt`, `Old note ${i}, about grebes number ${i}.`]));
    const { dir, project, source, docs } = await synced('held', { ...files, 'plan.txt': 'The plan, about divers on the loch.' });
    const plan = docs.get('plan.txt')!;
    for (const path of Object.keys(files)) rmSync(join(dir, path));
    renameSync(join(dir, 'plan.txt'), join(dir, 'plan-2026.txt'));
    const held = await client.sync(project, source);
    expect(held.status).toBe('paused');
    expect(held.paused_reason).toMatch(/would remove 7 of the source's 8 documents/);
    expect((await client.allDocuments(project)).length).toBe(8);
    // Confirmed: the seven go, and the plan's document is the renamed file (not fetched again in this pass).
    const confirmed = await client.sync(project, source, { confirm: true });
    expect(confirmed.last_result).toMatchObject({ deleted: 8, failed: 0 });
    expect(await names(project)).toEqual([{ filename: 'plan-2026.txt', source_path: 'plan-2026.txt' }]);
    expect(await shown(plan.id)).toMatchObject({ sha256: plan.sha256, filename: 'plan-2026.txt', source_path: 'plan-2026.txt' });
  }, 3 * MINUTE);

  describe.skipIf(NO_APACHE !== null)(`WebDAV, Git and a web site${NO_APACHE ? ` (skipped: ${NO_APACHE})` : ''}`, () => {
    let apache: Apache;
    beforeAll(async () => {
      apache = await startApache();
    }, 2 * MINUTE);
    afterAll(async () => {
      await apache?.stop();
    });

    /** Renamed, moved, and two swapped in one pass: each document follows its bytes, nothing embedded again. */
    async function renamesFollowed(project: string, source: string, docs: Map<string, DocWire>, change: () => void): Promise<void> {
      const [draft, x, y] = ['draft.txt', 'x.txt', 'y.txt'].map((path) => docs.get(path)!);
      const embeddedBefore = await embedded();
      change();
      expect((await client.sync(project, source)).last_result).toMatchObject({ failed: 0, deleted: 1 });
      expect(await shown(draft!.id)).toMatchObject({ sha256: draft!.sha256, filename: 'final.txt', source_path: 'done/final.txt', status: 'ready' });
      expect(await shown(x!.id)).toMatchObject({ sha256: x!.sha256, filename: 'y.txt', source_path: 'y.txt', status: 'ready' });
      expect(await shown(y!.id)).toMatchObject({ sha256: y!.sha256, filename: 'x.txt', source_path: 'x.txt', status: 'ready' });
      expect((await client.allDocuments(project)).map((doc) => doc.id).sort()).toEqual([draft!.id, x!.id, y!.id].sort());
      expect(await client.found(project, 'knots')).toEqual(['final.txt']);
      expect(await client.found(project, 'stints')).toEqual(['y.txt']);
      expect(await embedded()).toBe(embeddedBefore);
      expect((await client.sync(project, source)).last_result).toMatchObject({ added: 0, changed: 0, deleted: 0, failed: 0 });
    }

    const FILES = { 'draft.txt': 'A draft about knots on the shore.', 'x.txt': 'The x note, about stints.', 'y.txt': 'The y note, about ruffs.' };

    it('WebDAV: a file renamed into another folder, and two files swapping names', async () => {
      const base = join(apache.davDir, 'docs', 'renames');
      write(base, FILES);
      const { project, source, docs } = await withSource('webdav renames', { kind: 'webdav', url: `${apache.davUrl}/docs/renames/`, options: { username: apache.davUser.name, password: apache.davUser.password } }, 3);
      await renamesFollowed(project, source, docs, () => {
        mkdirSync(join(base, 'done'));
        apache.own(join(base, 'done'));
        renameSync(join(base, 'draft.txt'), join(base, 'done', 'final.txt'));
        renameSync(join(base, 'x.txt'), join(base, 'tmp'));
        renameSync(join(base, 'y.txt'), join(base, 'x.txt'));
        renameSync(join(base, 'tmp'), join(base, 'y.txt'));
      });
    }, 3 * MINUTE);

    it('Git: a commit renaming a file into another folder and swapping two (the diff lists deletions and additions)', async () => {
      const work = dirs.make('git-work');
      const { git, commit } = gitWorkTree(apache.gitDir, 'renames', work);
      write(work, FILES);
      commit('three notes');
      const { project, source, docs } = await withSource('git renames', { url: `${apache.gitUrl}/private/renames.git`, options: { branch: 'main', username: apache.davUser.name, password: apache.davUser.password } }, 3);
      await renamesFollowed(project, source, docs, () => {
        mkdirSync(join(work, 'done'));
        git('mv', 'draft.txt', 'done/final.txt');
        git('mv', 'x.txt', 'tmp');
        git('mv', 'y.txt', 'x.txt');
        git('mv', 'tmp', 'y.txt');
        commit('renamed and swapped');
      });
    }, 3 * MINUTE);

    it('a web page moved to another address (the link to it changed): its document names the new page and URL', async () => {
      const page = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;
      const site = join(apache.siteDir, 'moved');
      const moved = page('Guide', '<p>A guide to watching phalaropes.</p>');
      write(site, { 'index.html': page('Start', '<p>The start page.</p><a href="old-guide.html">guide</a>'), 'old-guide.html': moved });
      const { project, source, docs } = await withSource('web page moved', { url: `${apache.siteUrl}/moved/`, options: { delay_ms: 0 } }, 2);
      const guide = [...docs.values()].find((doc) => doc.filename === 'old-guide.html')!;
      renameSync(join(site, 'old-guide.html'), join(site, 'new-guide.html'));
      write(site, { 'index.html': page('Start', '<p>The start page.</p><a href="new-guide.html">guide</a>') });
      expect((await client.sync(project, source)).last_result).toMatchObject({ failed: 0, deleted: 1 });
      const after = (await shown(guide.id)) as DocWire & { metadata: Record<string, unknown> };
      expect(after).toMatchObject({ sha256: guide.sha256, filename: 'new-guide.html', status: 'ready' });
      expect(after.source_path).toMatch(/new-guide\.html$/);
      expect(after.metadata.url).toBe(`${apache.siteUrl}/moved/new-guide.html`);
      expect(await client.found(project, 'phalaropes')).toEqual(['new-guide.html']);
      // Its chunks carry the new address too: a search filtered by it finds the page, by the old one nothing.
      const byUrl = async (url: string) => {
        const res = await api(client.daemon as Daemon, '/api/v1/search', { token: client.token, body: { query: 'phalaropes', project_ids: [project], mode: 'keyword', filters: { metadata: { url } } } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return (res.body.results as { document: { filename: string } }[]).map((r) => r.document.filename);
      };
      expect(await byUrl(`${apache.siteUrl}/moved/new-guide.html`)).toEqual(['new-guide.html']);
      expect(await byUrl(`${apache.siteUrl}/moved/old-guide.html`)).toEqual([]);
    }, 3 * MINUTE);
  });
});
