/**
 * Sources through the built daemon, with the `folder` kind (no server to start): the acceptance for a kind,
 * files on disk showing up within one interval, a symlink out of the folder ignored, the roots, the deletion guard
 * and its confirmation, removal with and without the documents, an upload with the same bytes as a file left alone,
 * another user's project, metrics, and sources kept across a restart.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { callsBetween, statementCalls } from '../helpers/postgres.js';
import { type DocWire, kindAcceptance, SourceClient } from '../helpers/sources.js';
import { loggedIn } from '../server/web-client.js';
import { tempDirs } from '../helpers/temp-dirs.js';

/**
 * What the database holds of the sources: the SQLite file's bytes and its write-ahead log's (a row just written is
 * there until a checkpoint), or the PostgreSQL table's rows.
 */
async function storedSources(d: Daemon): Promise<string> {
  if (!d.databaseUrl) {
    return ['docsearch.db', 'docsearch.db-wal']
      .filter((file) => existsSync(join(d.dataDir, file)))
      .map((file) => readFileSync(join(d.dataDir, file)).toString('latin1'))
      .join('\n');
  }
  const db = new pg.Client({ connectionString: d.databaseUrl });
  await db.connect();
  try {
    return JSON.stringify((await db.query('select * from sources')).rows);
  } finally {
    await db.end();
  }
}

const MINUTE = 60_000;

describe('folder sources', () => {
  const dirs = tempDirs('docsearch-sources');
  let root: string;
  let outside: string;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;
  const args = () => ['--source-roots', root, '--sources-min-interval', '1', '--sources-delete-guard-count', '5', '--sources-delete-guard-percent', '10'];

  beforeAll(async () => {
    root = dirs.make('root');
    outside = dirs.make('outside');
    d = await startDaemon({ args: args() });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  /** A new folder under the root, with `files` written into it. */
  function folder(name: string, files: Record<string, string> = {}): string {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  }

  it('passes the acceptance of a kind: added, changed in place, deleted, all deleted (paused)', async () => {
    const dir = folder('acceptance');
    await kindAcceptance(client, 'folder', {
      names: ['alpha.txt', 'beta.md', 'gamma.txt'],
      seed: async () => {
        writeFileSync(join(dir, 'alpha.txt'), 'The alphaword stands for the first of three notes.');
        mkdirSync(join(dir, 'sub'), { recursive: true });
        writeFileSync(join(dir, 'sub', 'beta.md'), '# Beta\n\nThe betaword is the second note.');
        writeFileSync(join(dir, 'gamma.txt'), 'The gammaword closes the set of notes.');
      },
      change: async () => writeFileSync(join(dir, 'sub', 'beta.md'), '# Beta\n\nNow the changedword stands here instead, a new text.'),
      removeOne: async () => rmSync(join(dir, 'gamma.txt')),
      removeAll: async () => {
        rmSync(join(dir, 'alpha.txt'));
        rmSync(join(dir, 'sub'), { recursive: true });
      },
      body: () => ({ url: `file://${dir}` }),
    });
  }, 5 * MINUTE);

  it('shows files added, changed and deleted on disk within one interval, and ignores a symlink out of the folder', async () => {
    const dir = folder('live', { 'one.txt': 'The first file of the live folder talks about kestrels.' });
    writeFileSync(join(outside, 'secret.txt'), 'A secret outside the root about passwords and vaults.');
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'leak.txt'));
    symlinkSync(outside, join(dir, 'leak-dir'));
    const project = await client.project('live folder');
    const source = await client.add(project, { url: `file://${dir}`, every: '2s' });
    const paths = async () => [...(await client.documents(project, source.id)).keys()].sort();
    await waitFor(async () => (await paths()).join() === 'one.txt', 30_000, 'the first file');

    writeFileSync(join(dir, 'two.txt'), 'A second file arrives, about herons.');
    writeFileSync(join(dir, 'one.txt'), 'The first file now talks about falcons instead.');
    await waitFor(async () => (await paths()).join() === 'one.txt,two.txt', 30_000, 'the added file');
    await waitFor(async () => (await client.found(project, 'falcons')).length === 1, 60_000, 'the changed file searchable');
    rmSync(join(dir, 'two.txt'));
    await waitFor(async () => (await paths()).join() === 'one.txt', 30_000, 'the deleted file gone');
    expect(await client.found(project, 'passwords vaults')).toEqual([]);
    const shown = await client.get(project, source.id);
    expect(shown.last_result?.failed).toBe(0);
  }, 3 * MINUTE);

  it('refuses a folder outside --source-roots, also through .. or a symlink, and a URL of no kind', async () => {
    const project = await client.project('refused folders');
    const refused = async (url: string, pattern: RegExp) => {
      const res = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey, body: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error.message).toMatch(pattern);
    };
    await refused(`file://${outside}`, /not under a folder the server allows/);
    await refused(`file://${root}/../${outside.split('/').pop()}`, /not under a folder the server allows/);
    const link = join(root, 'to-outside');
    symlinkSync(outside, link);
    await refused(`file://${link}`, /not under a folder the server allows/);
    await refused('ftp://example.com/docs', /name no kind of source/);
    const bad = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey, body: { url: `file://${root}`, every: '5 minutes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/every: a duration/);
    const fast = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey, body: { url: `file://${root}`, every: '500ms' } });
    expect(fast.body.error.message).toMatch(/every: a duration/);
    const unknown = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey, body: { url: `file://${root}`, options: { colour: 'red' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/^body\.options: .*"colour"/);
  });

  it('pauses a pass that would delete more than 10 % and more than 5 documents, and deletes once confirmed', async () => {
    const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`note-${i}.txt`, `Note number ${i} of twelve, about topic ${i * 7}.`]));
    const dir = folder('guarded', files);
    const project = await client.project('guarded folder');
    const source = await client.add(project, { url: `file://${dir}` });
    await client.passAfter(project, source.id, 0);
    await client.settled(project, source.id, 12);
    // 3 of 12: more than 10 % but not more than 5, so they go.
    for (const i of [0, 1, 2]) rmSync(join(dir, `note-${i}.txt`));
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ deleted: 3 });
    // 6 of 9: held (the source paused for its deletions), nothing removed.
    for (const i of [3, 4, 5, 6, 7, 8]) rmSync(join(dir, `note-${i}.txt`));
    const paused = await client.sync(project, source.id);
    expect(paused.status).toBe('paused');
    expect(paused.paused_reason).toMatch(/would remove 6 of the source's 9 documents \(67 %, more than 10 % and more than 5\)/);
    expect((await client.documents(project, source.id)).size).toBe(9);
    // A pass without confirmation goes on holding them (issue 61: new files still arrive meanwhile).
    expect((await client.sync(project, source.id)).paused_reason).toMatch(/would remove 6/);
    expect((await client.documents(project, source.id)).size).toBe(9);
    const confirmed = await client.sync(project, source.id, { confirm: true });
    expect(confirmed.status).toBe('active');
    expect(confirmed.last_result).toMatchObject({ deleted: 6, unchanged: 3 });
    expect([...(await client.documents(project, source.id)).keys()].sort()).toEqual(['note-10.txt', 'note-11.txt', 'note-9.txt']);
  }, 3 * MINUTE);

  it('removes a source with its documents, or keeps them as uploads; an upload beside a source stays', async () => {
    const dir = folder('removal', { 'kept.txt': 'Kept text about lighthouses.', 'other.txt': 'Other text about harbours.' });
    const project = await client.project('removal');
    const form = new FormData();
    form.append('project_id', project);
    form.append('file', new Blob(['An upload beside the source, about tugboats.'], { type: 'text/plain' }), 'upload.txt');
    expect((await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form })).status).toBe(200);
    const first = await client.add(project, { url: `file://${dir}` });
    await client.passAfter(project, first.id, 0);
    await client.settled(project, first.id, 2);
    expect((await api(d, `/api/v1/projects/${project}/sources/${first.id}?keep_documents=true`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    const kept = await client.allDocuments(project);
    expect(kept.map((x) => [x.filename, x.source_id]).sort()).toEqual([['kept.txt', null], ['other.txt', null], ['upload.txt', null]]);

    const dir2 = folder('removal-2', { 'gone.txt': 'This text about glaciers leaves with its source.' });
    const second = await client.add(project, { url: `file://${dir2}` });
    await client.passAfter(project, second.id, 0);
    await client.settled(project, second.id, 1);
    expect((await api(d, `/api/v1/projects/${project}/sources/${second.id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect((await client.allDocuments(project)).map((x) => x.filename).sort()).toEqual(['kept.txt', 'other.txt', 'upload.txt']);
    expect((await api(d, `/api/v1/projects/${project}/sources/${second.id}`, { token: user.apiKey })).status).toBe(404);
  }, 3 * MINUTE);

  it('never touches an upload that has the same bytes as one of its files: changed, deleted, or removed with the source', async () => {
    // Same bytes are one document (docs/sources.md): the source's file is the upload's document, which stays the user's.
    const text = 'An upload whose bytes a source file has too, about pelicans.';
    const dir = folder('same-as-upload', { 'copy.txt': text, 'own.txt': 'The source\'s own file, about cormorants.' });
    const project = await client.project('same as an upload');
    const form = new FormData();
    form.append('project_id', project);
    form.append('file', new Blob([text], { type: 'text/plain' }), 'upload.txt');
    const uploaded = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    expect(uploaded.status).toBe(200);
    const upload = ((await uploaded.json()) as { documents: DocWire[] }).documents[0]!;
    const source = await client.add(project, { url: `file://${dir}` });
    await client.passAfter(project, source.id, 0);
    await client.settled(project, source.id, 1);
    const unchanged = (x: DocWire[]) => x.find((doc) => doc.id === upload.id);
    expect(unchanged(await client.allDocuments(project))).toMatchObject({ filename: 'upload.txt', source_id: null, sha256: upload.sha256 });
    // Its file changed: new bytes of the source's own; the upload keeps its bytes.
    writeFileSync(join(dir, 'copy.txt'), 'The copy changed on disk, now about shags.');
    await client.sync(project, source.id);
    await client.settled(project, source.id, 2);
    expect(unchanged(await client.allDocuments(project))).toMatchObject({ filename: 'upload.txt', source_id: null, sha256: upload.sha256 });
    // Back to the upload's bytes, then deleted: the upload stays.
    writeFileSync(join(dir, 'copy.txt'), text);
    await client.sync(project, source.id);
    // Its bytes are the upload's again: one document, the upload, as two uploads of the same bytes are.
    expect((await client.allDocuments(project)).map((x) => [x.filename, x.source_id]).sort()).toEqual([['own.txt', source.id], ['upload.txt', null]]);
    rmSync(join(dir, 'copy.txt'));
    expect((await client.sync(project, source.id)).status).toBe('active');
    expect(unchanged(await client.allDocuments(project))).toMatchObject({ filename: 'upload.txt', source_id: null });
    // The source removed with its documents: the upload stays, the source's own file goes.
    writeFileSync(join(dir, 'copy.txt'), text);
    await client.sync(project, source.id);
    expect((await api(d, `/api/v1/projects/${project}/sources/${source.id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect((await client.allDocuments(project)).map((x) => [x.id, x.filename])).toEqual([[upload.id, 'upload.txt']]);
    expect(await client.found(project, 'pelicans')).toEqual(['upload.txt']);
  }, 3 * MINUTE);

  it("keeps another user's sources from view and change (404)", async () => {
    const project = await client.project('private sources');
    const source = await client.add(project, { url: `file://${folder('private')}` });
    const other = await addUser(d);
    for (const [method, path] of [
      ['GET', `/projects/${project}/sources`],
      ['GET', `/projects/${project}/sources/${source.id}`],
      ['PATCH', `/projects/${project}/sources/${source.id}`],
      ['DELETE', `/projects/${project}/sources/${source.id}`],
      ['POST', `/projects/${project}/sources/${source.id}/sync`],
      ['POST', `/projects/${project}/sources`],
    ] as const) {
      const ask = (p: string) => api(d, `/api/v1${p}`, { method, token: other.apiKey, ...(method === 'GET' || method === 'DELETE' ? {} : { body: method === 'PATCH' ? { every: '2h' } : method === 'POST' && p.endsWith('sources') ? { url: 'file:///tmp' } : {} }) });
      const res = await ask(path);
      expect(res.status, `${method} ${path}`).toBe(404);
      // The same answer as for a project and source that do not exist: nothing tells them apart.
      const [noProject, noSource] = ['prj_000000000ZZZZZZZZZZZZ', 'src_000000000ZZZZZZZZZZZZ'];
      const none = await ask(path.replace(project, noProject).replace(source.id, noSource));
      const said = (body: { error: { code: string; message: string } }) => ({ code: body.error.code, message: body.error.message });
      expect(JSON.parse(JSON.stringify(said(res.body)).replaceAll(project, noProject).replaceAll(source.id, noSource)), `${method} ${path}`).toEqual(said(none.body));
    }
    // And nothing was done: the source is as its owner made it, and no other was added to the project.
    const after = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey });
    expect((after.body.sources as { id: string }[]).map((x) => x.id)).toEqual([source.id]);
    expect((await api(d, `/api/v1/projects/${project}/sources/${source.id}`, { token: user.apiKey })).body).toMatchObject({ id: source.id, every: source.every, status: source.status });
  });

  it("seals credentials under the library's own secrets key when the operator names none, and never shows them", async () => {
    const project = await client.project('own key');
    const res = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey, body: { url: 'https://alice:hunter2hunter2@cloud.example.com/remote.php/dav/files/alice/' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    expect(res.body.secrets).toEqual(['password']);
    expect(statSync(join(d.dataDir, 'secrets.key')).mode & 0o777).toBe(0o600);
    expect(await storedSources(d)).toContain(res.body.id as string);
    expect(await storedSources(d)).not.toContain('hunter2hunter2');
    // Nor shown by a read, the list or the log.
    const one = await api(d, `/api/v1/projects/${project}/sources/${res.body.id}`, { token: user.apiKey });
    const list = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey });
    expect([one.status, list.status]).toEqual([200, 200]);
    for (const text of [JSON.stringify(one.body), JSON.stringify(list.body), d.stdout(), d.stderr()]) expect(text).not.toContain('hunter2');
  });

  it('counts passes and items in /metrics, and shows paused sources', async () => {
    // Its own source, so the figures do not rest on the tests before it: a pass that adds, then one held (all gone).
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`m-${i}.txt`, `Metrics note ${i}, about counter ${i * 11}.`]));
    const dir = folder('metrics', files);
    const project = await client.project('metrics folder');
    const source = await client.add(project, { url: `file://${dir}` });
    await client.passAfter(project, source.id, 0);
    await client.settled(project, source.id, 6);
    for (const name of Object.keys(files)) rmSync(join(dir, name));
    expect((await client.sync(project, source.id)).status).toBe('paused');
    const text = await (await fetch(`${d.url}/metrics`)).text();
    expect(text).toMatch(/^docsearch_source_passes_total\{kind="folder",outcome="ok"\} [1-9]\d*$/m);
    expect(text).toMatch(/^docsearch_source_passes_total\{kind="folder",outcome="paused"\} [1-9]\d*$/m);
    expect(text).toMatch(/^docsearch_source_items_total\{kind="folder",action="added"\} [1-9]\d*$/m);
    expect(text).toMatch(/^docsearch_sources\{state="paused"\} [1-9]\d*$/m);
    expect(text).toMatch(/^docsearch_source_item_errors 0$/m);
    // Every pass is timed too (docs/operations.md): one observation per pass counted, whatever its outcome.
    const value = (series: RegExp) => Number(series.exec(text)?.[1] ?? NaN);
    const passes = ['ok', 'paused', 'error'].reduce((n, outcome) => n + (value(new RegExp(`^docsearch_source_passes_total\\{kind="folder",outcome="${outcome}"\\} (\\d+)$`, 'm')) || 0), 0);
    expect(passes).toBeGreaterThanOrEqual(2);
    expect(value(/^docsearch_source_pass_duration_seconds_count\{kind="folder"\} (\d+)$/m)).toBe(passes);
  }, 3 * MINUTE);

  it('shows an item it cannot read (its type) on the source, goes on with the others, and tries it again next pass', async () => {
    const dir = folder('unreadable', { 'fine.txt': 'A readable note about wrens.' });
    writeFileSync(join(dir, 'program.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0, 0, 0]));
    const project = await client.project('unreadable items');
    const source = await client.add(project, { url: `file://${dir}` });
    const first = await client.passAfter(project, source.id, 0);
    expect(first.status).toBe('active');
    expect(first.last_result).toMatchObject({ added: 1, failed: 1 });
    const shown = await client.get(project, source.id);
    expect(shown.item_errors).toEqual({ count: 1, items: [expect.objectContaining({ path: 'program.bin', error: expect.stringMatching(/"program.bin" is not a type docsearch reads/) })] });
    // The gauge is read at scrapes, at most every 5 s.
    await waitFor(async () => /^docsearch_source_item_errors [1-9]\d*$/m.test(await (await fetch(`${d.url}/metrics`)).text()), 15_000, 'the item error in /metrics');
    // Fixed at the source: the next pass takes it.
    writeFileSync(join(dir, 'program.bin'), 'Now plain text about nuthatches.');
    const again = await client.sync(project, source.id);
    expect(again.last_result).toMatchObject({ added: 1, changed: 0, failed: 0, unchanged: 1 });
    expect((await client.get(project, source.id)).item_errors?.count).toBe(0);
    await client.settled(project, source.id, 2);
  });

  it("keeps a copy's text when the other of two files with the same bytes (one document) changes", async () => {
    const same = 'The same note twice, about cormorants on the breakwater.';
    const dir = folder('copies', { 'a-notes.txt': same, 'b-notes-copy.txt': same });
    const project = await client.project('copies');
    const source = await client.add(project, { url: `file://${dir}` });
    expect((await client.passAfter(project, source.id, 0)).last_result).toMatchObject({ listed: 2, failed: 0 });
    const [shared] = [...(await client.settled(project, source.id, 1)).values()];
    expect(shared!.filename).toBe('a-notes.txt');

    writeFileSync(join(dir, 'b-notes-copy.txt'), 'The copy now says something else, about shags in the harbour.');
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ changed: 1, unchanged: 1, deleted: 0, failed: 0 });
    // The unchanged file's document is as it was (its bytes, its id); the changed one's bytes are a document of their own.
    const docs = await client.documents(project, source.id);
    expect(docs.get('a-notes.txt')).toMatchObject({ id: shared!.id, sha256: shared!.sha256 });
    expect(docs.get('b-notes-copy.txt')?.id).not.toBe(shared!.id);
    await client.settled(project, source.id, 2);
    await waitFor(async () => (await client.found(project, 'shags')).length === 1, 60_000, 'the changed copy searchable');
    expect(await client.found(project, 'shags')).toEqual(['b-notes-copy.txt']);
    expect(await client.found(project, 'cormorants')).toEqual(['a-notes.txt']);
    // The copy deleted: its document goes, the other stays.
    rmSync(join(dir, 'b-notes-copy.txt'));
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ deleted: 1, unchanged: 1 });
    expect([...(await client.documents(project, source.id)).values()].map((x) => x.id)).toEqual([shared!.id]);
    expect(await client.found(project, 'cormorants')).toEqual(['a-notes.txt']);

    // The other way round: the changed file is listed first. Its document follows it, and the unchanged copy,
    // listed after it in the same pass, gets a document of its own bytes.
    const twin = 'Two files alike, about gannets diving.';
    const dir2 = folder('copies-2', { 'a-changed.txt': twin, 'b-unchanged.txt': twin });
    const project2 = await client.project('copies, the other way');
    const source2 = await client.add(project2, { url: `file://${dir2}` });
    await client.passAfter(project2, source2.id, 0);
    await client.settled(project2, source2.id, 1);
    writeFileSync(join(dir2, 'a-changed.txt'), 'The first file now speaks of boobies instead.');
    expect((await client.sync(project2, source2.id)).last_result).toMatchObject({ deleted: 0, failed: 0 });
    expect([...(await client.settled(project2, source2.id, 2)).keys()].sort()).toEqual(['a-changed.txt', 'b-unchanged.txt']);
    await waitFor(async () => (await client.found(project2, 'gannets')).length === 1 && (await client.found(project2, 'boobies')).length === 1, 60_000, 'both texts searchable');
    expect(await client.found(project2, 'gannets')).toEqual(['b-unchanged.txt']);
    expect(await client.found(project2, 'boobies')).toEqual(['a-changed.txt']);
  }, 3 * MINUTE);

  // Same bytes in two sources are one document, made by the first (docs/sources.md): when that source's file goes, or
  // the source does, the other source's file must still be found, as the same document, now that source's.
  let pairs = 0;
  /** Two sources of a new project listing the same bytes (the first made the document), and files only the first has. */
  const pair = async (word: string) => {
    const n = ++pairs;
    const text = `The shared note, about ${word} in the estuary.`;
    const a = folder(`hand-over-a-${n}`, { 'from-a.txt': text, 'only-a.txt': `Only the first source has this, about ${word}lings.`, 'stays-a.txt': `A third note of ${n}, about dunlins.` });
    const b = folder(`hand-over-b-${n}`, { 'in-b.txt': text });
    const project = await client.project(`hand over ${n}`);
    const first = await client.add(project, { url: `file://${a}`, labels: ['from-a'] });
    await client.passAfter(project, first.id, 0);
    const shared = (await client.settled(project, first.id, 3)).get('from-a.txt')!;
    const second = await client.add(project, { url: `file://${b}`, labels: ['from-b'] });
    expect((await client.passAfter(project, second.id, 0)).last_result).toMatchObject({ added: 1, failed: 0 });
    expect((await client.allDocuments(project)).find((x) => x.id === shared.id)).toMatchObject({ source_id: first.id, source_path: 'from-a.txt' });
    return { a, project, first, second, shared };
  };
  /** The shared document is the second source's now: its id kept, the second source's path, name and labels, found. */
  const handedOver = async ({ project, second, shared }: Awaited<ReturnType<typeof pair>>, word: string) => {
    const doc = (await client.allDocuments(project)).find((x) => x.id === shared.id);
    expect(doc).toMatchObject({ source_id: second.id, source_path: 'in-b.txt', filename: 'in-b.txt', sha256: shared.sha256, status: 'ready' });
    expect((doc as unknown as { labels: string[] }).labels).toEqual(['from-b']);
    expect(await client.found(project, word)).toEqual(['in-b.txt']);
    // The second source's passes keep it (its item unchanged), and it stays found.
    expect((await client.sync(project, second.id)).last_result).toMatchObject({ unchanged: 1, deleted: 0 });
    expect(await client.found(project, word)).toEqual(['in-b.txt']);
  };

  it("hands a document two sources list over to the other when the first one's file goes; one only it lists is deleted", async () => {
    const gone = await pair('godwits');
    rmSync(join(gone.a, 'from-a.txt'));
    rmSync(join(gone.a, 'only-a.txt'));
    const asked = d.databaseUrl ? await statementCalls(d.databaseUrl) : null;
    expect((await client.sync(gone.project, gone.first.id)).last_result).toMatchObject({ deleted: 2, unchanged: 1 });
    // Which other source lists each document the pass lets go is asked once for them all (deletion guard included),
    // not once a document: a round trip each on PostgreSQL (test/store/round-trips.test.ts).
    if (asked) expect(callsBetween(asked, await statementCalls(d.databaseUrl!), /from "source_items" inner join "sources"/i)).toBe(1);
    await handedOver(gone, 'godwits');
    expect(await client.found(gone.project, 'godwitslings')).toEqual([]);
    expect((await client.allDocuments(gone.project)).map((x) => x.filename).sort()).toEqual(['in-b.txt', 'stays-a.txt']);
  }, 3 * MINUTE);

  it('hands a document two sources list over to the other when the first is removed with its documents', async () => {
    const removed = await pair('curlews');
    const asked = d.databaseUrl ? await statementCalls(d.databaseUrl) : null;
    expect((await api(d, `/api/v1/projects/${removed.project}/sources/${removed.first.id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    // Which other source lists each of its documents, and its item, in one statement for them all (as a pass asks).
    if (asked) expect(callsBetween(asked, await statementCalls(d.databaseUrl!), /from "source_items" inner join "sources"/i)).toBe(1);
    await handedOver(removed, 'curlews');
    expect((await client.allDocuments(removed.project)).map((x) => x.filename)).toEqual(['in-b.txt']);
    // The audit log says so (user is the first account: an admin). docs/operations.md's source.removed row.
    const events = await api(d, `/api/v1/audit-events?type=source.removed`, { token: user.apiKey });
    expect(events.status).toBe(200);
    const event = (events.body.events as { target: { id?: string }; details: Record<string, unknown> }[]).find((e) => JSON.stringify(e.target).includes(removed.first.id));
    expect(event?.details).toMatchObject({ documents: 3, kept_documents: false, handed_over: 1 });
  }, 3 * MINUTE);

  it('hands a document two sources list over to the other when the first is removed with keep_documents', async () => {
    const kept = await pair('whimbrels');
    expect((await api(d, `/api/v1/projects/${kept.project}/sources/${kept.first.id}?keep_documents=true`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    await handedOver(kept, 'whimbrels');
    expect((await client.allDocuments(kept.project)).map((x) => [x.filename, x.source_id]).sort()).toEqual([['in-b.txt', kept.second.id], ['only-a.txt', null], ['stays-a.txt', null]]);
  }, 3 * MINUTE);

  it('leaves a document two sources list, deleted by hand, deleted after both passes', async () => {
    const byHand = await pair('plovers');
    expect((await api(d, `/api/v1/documents/${byHand.shared.id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    rmSync(join(byHand.a, 'from-a.txt'));
    await client.sync(byHand.project, byHand.first.id);
    await client.sync(byHand.project, byHand.second.id);
    expect((await client.allDocuments(byHand.project)).map((x) => x.id)).not.toContain(byHand.shared.id);
    expect(await client.found(byHand.project, 'plovers')).toEqual([]);
  }, 3 * MINUTE);

  it('takes a file changed back to its earlier bytes: the same document, its first text searchable again', async () => {
    const first = 'The first text of the note, about curlews.';
    const dir = folder('back-and-forth', { 'note.txt': first, 'other.txt': 'Another note, about godwits.' });
    const project = await client.project('changed back');
    const source = await client.add(project, { url: `file://${dir}` });
    await client.passAfter(project, source.id, 0);
    const original = (await client.settled(project, source.id, 2)).get('note.txt')!;
    writeFileSync(join(dir, 'note.txt'), 'A second text of the note, about whimbrels.');
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ changed: 1, unchanged: 1 });
    // Once seen to time out (1 run in 5, on a loaded machine): a timeout then says what state the documents were in
    // and what the search finds of either text.
    await waitFor(async () => (await client.found(project, 'whimbrels')).length === 1, 60_000, 'the second text searchable').catch(async (err: Error) => {
      const states = (await client.allDocuments(project)).map((x) => ({ filename: x.filename, status: x.status, sha256: x.sha256 }));
      throw new Error(`${err.message}; the documents: ${JSON.stringify(states)}; "curlews" finds ${JSON.stringify(await client.found(project, 'curlews'))}`);
    });
    writeFileSync(join(dir, 'note.txt'), first);
    expect((await client.sync(project, source.id)).last_result).toMatchObject({ changed: 1, unchanged: 1, added: 0, deleted: 0 });
    const back = (await client.settled(project, source.id, 2)).get('note.txt')!;
    expect([back.id, back.sha256]).toEqual([original.id, original.sha256]);
    await waitFor(async () => (await client.found(project, 'curlews')).length === 1, 60_000, 'the first text searchable again');
    expect(await client.found(project, 'whimbrels')).toEqual([]);
  }, 3 * MINUTE);

  it('is managed from the CLI: sources add, list, show, sync, remove (with its documents, or --keep-documents)', async () => {
    const dir = folder('cli', { 'cli.txt': 'A file the command line added, about otters.' });
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const project = await client.project('cli project');
    const added = await runCli(['sources', 'add', 'cli project', `file://${dir}`, '--every', '2m', '--exclude', '**/*.tmp'], { env });
    expect(added.code, added.stderr).toBe(0);
    const id = added.stdout.trim();
    expect(id).toMatch(/^src_/);
    expect(added.stderr).toMatch(/added folder source file:\/\/.* to cli project, every 2m/);
    const listed = await runCli(['sources', 'list', '--project', 'cli project', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    // The list itself, as gh prints one (issue 61, Low 27).
    const sources = JSON.parse(listed.stdout) as { id: string; every: string; options: unknown }[];
    expect(sources).toEqual([expect.objectContaining({ id, every: '2m', options: { exclude: ['**/*.tmp'] } })]);
    const synced = await runCli(['sources', 'sync', id], { env });
    expect(synced.code, synced.stderr).toBe(0);
    const shown = await waitFor(async () => {
      const out = await runCli(['sources', 'show', id], { env });
      return /last pass\s+1 listed: . added/.test(out.stdout) ? out : undefined;
    }, 30_000, 'a pass in `sources show`');
    expect(shown.stdout).toMatch(/kind\s+folder/);
    expect(shown.stdout).toMatch(/every\s+2m/);
    const table = await runCli(['sources'], { env });
    expect(table.stdout).toContain(id);
    const removed = await runCli(['sources', 'remove', id, '--yes'], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse((await runCli(['sources', 'list', '--project', 'cli project', '--json'], { env })).stdout)).toEqual([]);
    expect(await client.allDocuments(project)).toEqual([]);
    // Removed with --keep-documents: its document stays, an upload now.
    const again = (await runCli(['sources', 'add', 'cli project', `file://${dir}`], { env })).stdout.trim();
    await client.passAfter(project, again, 0);
    await client.settled(project, again, 1);
    const kept = await runCli(['sources', 'remove', again, '--keep-documents', '--yes'], { env });
    expect(kept.code, kept.stderr).toBe(0);
    expect((await client.allDocuments(project)).map((x) => [x.filename, x.source_id])).toEqual([['cli.txt', null]]);
  }, 3 * MINUTE);

  it('is managed on the project page\'s Sources tab: add, see its state, sync, pause, resume, remove', async () => {
    const dir = folder('web', { 'page.txt': 'A file the web page added, about puffins.' });
    const project = await client.project('web tab');
    const web = await loggedIn(d, user);
    const page = await web.get(`/projects/${project}`);
    expect(page.text).toContain(`href="/projects/${project}/sources"`);
    const tab = await web.get(`/projects/${project}/sources`);
    expect(tab.status).toBe(200);
    expect(tab.text).toContain('No sources yet.');
    const refused = await web.submit(`/projects/${project}/sources`, { _csrf: web.csrf, url: `file://${outside}`, kind: '', every: '1h', username: '', password: '' });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/The source was not added: url: .*not under a folder the server allows/);
    const added = await web.submit(`/projects/${project}/sources`, { _csrf: web.csrf, url: `file://${dir}`, kind: '', every: '30m', username: '', password: '' });
    expect(added.status).toBe(200);
    expect(added.text).toContain(`Added file://${dir}: its first pass is under way.`);
    const [source] = (await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey })).body.sources as { id: string }[];
    await client.passAfter(project, source!.id, 0);
    const shown = await web.get(`/projects/${project}/sources`);
    expect(shown.text).toMatch(/every 30m/);
    expect(shown.text).toMatch(/1 item: 1 added, 0 changed, 0 deleted, 0 unchanged/);
    const paused = await web.submit(`/projects/${project}/sources/${source!.id}/pause`, { _csrf: web.csrf });
    expect(paused.text).toContain('Paused: paused by its owner');
    const resumed = await web.submit(`/projects/${project}/sources/${source!.id}/resume`, { _csrf: web.csrf });
    expect(resumed.text).toMatch(/resumed: its next pass removes what it finds gone/);
    const other = await addUser(d);
    const stranger = await loggedIn(d, other);
    expect((await stranger.get(`/projects/${project}/sources`)).status).toBe(404);
    expect((await stranger.post(`/projects/${project}/sources/${source!.id}/remove`, { _csrf: (await stranger.get('/projects'), stranger.csrf) })).status).toBe(404);
    const confirm = await web.get(`/projects/${project}/sources/${source!.id}/remove`);
    expect(confirm.text).toContain(`Remove the source file://${dir}?`);
    expect(confirm.text).toContain('It made 1 document: that is deleted with it and leaves search at once, unless you keep it');
    const removed = await web.submit(`/projects/${project}/sources/${source!.id}/remove`, { _csrf: web.csrf, keep_documents: 'true' });
    expect(removed.text).toContain(`Removed file://${dir}; its documents stay.`);
    expect(removed.text).toContain('No sources yet.');
  }, 3 * MINUTE);

  it('keeps sources across a restart, and runs them after it', async () => {
    const dir = folder('restart', { 'before.txt': 'Written before the restart, about owls.' });
    const project = await client.project('restart');
    const source = await client.add(project, { url: `file://${dir}` });
    await client.passAfter(project, source.id, 0);
    await d.stop();
    d = await startDaemon({ dataDir: d.dataDir, ...(d.databaseUrl ? { databaseUrl: d.databaseUrl } : {}), args: args() });
    client = new SourceClient(d, user.apiKey);
    writeFileSync(join(dir, 'after.txt'), 'Written after the restart, about badgers.');
    const after = await client.sync(project, source.id);
    expect(after.last_result).toMatchObject({ added: 1, unchanged: 1 });
    await client.settled(project, source.id, 2);
  }, 3 * MINUTE);
});
