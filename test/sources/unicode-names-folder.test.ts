/**
 * A folder source over a Mac's names (docs/api.md#names): its files and folders named decomposed (NFD), the
 * project's labels typed composed (NFC). The two spellings are one name wherever docsearch compares names.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');

describe('a folder source with names in NFC and NFD', () => {
  const dirs = tempDirs('docsearch-unicode-source');
  let root: string;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;
  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'] });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  it('names from a Mac: labels given decomposed are the project label, file names are stored composed, a file renamed to its other spelling keeps its document', { timeout: 300_000 }, async () => {
    const folder = join(root, 'mac');
    mkdirSync(join(folder, NFD('Ordner Übersicht')), { recursive: true });
    writeFileSync(join(folder, NFD('Ordner Übersicht'), NFD('Résumé.txt')), 'The café on the corner serves crème brûlée every morning.\n');
    writeFileSync(join(folder, NFD('Café.txt')), 'Opening hours of the café: eight to six.\n');
    const p = await client.project('Folder source');
    expect((await api(d, `/api/v1/projects/${p}/labels`, { token: user.apiKey, body: { name: NFC('Entwürfe') } })).status).toBe(201);
    const src = await client.add(p, { url: `file://${folder}`, labels: [NFD('Entwürfe')] });
    expect(src.labels).toEqual([NFC('Entwürfe')]);
    expect((await client.passAfter(p, src.id, 0)).last_result).toMatchObject({ added: 2 });
    const docs = await client.settled(p, src.id, 2);
    const shown = [...docs.values()].map((x) => x.filename).sort();
    expect(shown).toEqual([NFC('Café.txt'), NFC('Résumé.txt')]);
    expect([...docs.values()].map((x) => (x as unknown as { labels: string[] }).labels)).toEqual([[NFC('Entwürfe')], [NFC('Entwürfe')]]);
    const vocabulary = (await api(d, `/api/v1/projects/${p}/labels`, { token: user.apiKey })).body.labels.map((l: { name: string }) => l.name);
    expect(vocabulary).toEqual([NFC('Entwürfe')]);
    expect((await client.sync(p, src.id)).last_result).toMatchObject({ added: 0, deleted: 0, unchanged: 2 });

    // The same file, its name now composed (as a sync client from another system writes it): a rename on disk,
    // which the document follows (its id, labels and index kept), not a document deleted and another made.
    // Its pass counts it unchanged, not added and deleted: the document's source_path takes the bytes listed (the
    // path the file system has now), its name shows the same, and nothing was indexed again.
    const before = docs.get(NFD('Café.txt'))!;
    renameSync(join(folder, NFD('Café.txt')), join(folder, NFC('Café.txt')));
    expect((await client.sync(p, src.id)).last_result).toMatchObject({ listed: 2, added: 0, changed: 0, deleted: 0, unchanged: 2, failed: 0 });
    const after = await client.documents(p, src.id);
    expect([...after.keys()].sort()).toEqual([NFC('Café.txt'), NFD('Ordner Übersicht/Résumé.txt')].sort());
    expect(after.get(NFC('Café.txt'))).toMatchObject({ id: before.id, filename: NFC('Café.txt'), sha256: before.sha256, status: 'ready' });
    // And back (a Mac's sync client writing it decomposed again), in a folder name this time.
    renameSync(join(folder, NFD('Ordner Übersicht')), join(folder, NFC('Ordner Übersicht')));
    renameSync(join(folder, NFC('Café.txt')), join(folder, NFD('Café.txt')));
    expect((await client.sync(p, src.id)).last_result).toMatchObject({ listed: 2, added: 0, changed: 0, deleted: 0, unchanged: 2, failed: 0 });
    const back = await client.documents(p, src.id);
    expect([...back.keys()].sort()).toEqual([NFD('Café.txt'), NFC('Ordner Übersicht') + '/' + NFD('Résumé.txt')].sort());
    expect(back.get(NFD('Café.txt'))).toMatchObject({ id: before.id, filename: NFC('Café.txt') });
    expect(back.get(NFC('Ordner Übersicht') + '/' + NFD('Résumé.txt'))!.id).toBe(docs.get(NFD('Ordner Übersicht/Résumé.txt'))!.id);
    // Both spellings side by side (two files to the file system), the second a copy: listed too, it is added.
    writeFileSync(join(folder, NFC('Café.txt')), 'Opening hours of the café: eight to six.\n');
    expect((await client.sync(p, src.id)).last_result).toMatchObject({ listed: 3, added: 1, deleted: 0, unchanged: 2 });
  });

  it('include and exclude globs typed in one spelling choose the paths listed in the other', { timeout: 300_000 }, async () => {
    const folder = join(root, 'globs');
    mkdirSync(join(folder, NFD('Entwürfe')), { recursive: true });
    mkdirSync(join(folder, NFC('Berichte für Q1')), { recursive: true });
    mkdirSync(join(folder, 'other'), { recursive: true });
    writeFileSync(join(folder, NFD('Entwürfe'), 'plan.txt'), 'The plan for the new reading room.\n');
    writeFileSync(join(folder, NFD('Entwürfe'), NFD('Übersicht-alt.txt')), 'An old overview nobody wants indexed.\n');
    writeFileSync(join(folder, NFC('Berichte für Q1'), NFD('März.txt')), 'The report for March.\n');
    writeFileSync(join(folder, 'other', 'left-out.txt'), 'Not in any included folder.\n');
    const p = await client.project('Globs');
    // Typed composed (a browser's form), the folders decomposed; and a glob pasted decomposed over a composed folder.
    const src = await client.add(p, { url: `file://${folder}`, options: { include: [NFC('Entwürfe/**'), NFD('Berichte für Q1/*.txt')], exclude: [NFC('**/Übersicht-*')] } });
    expect((await client.passAfter(p, src.id, 0)).last_result).toMatchObject({ added: 2 });
    const docs = await client.settled(p, src.id, 2);
    expect([...docs.keys()].map(NFC).sort()).toEqual([NFC('Berichte für Q1/März.txt'), NFC('Entwürfe/plan.txt')]);
  });

  it('names a person cannot read as they are (invisible, bidirectional, line-breaking, control characters) are shown without those characters; the path keeps them', { timeout: 300_000 }, async () => {
    // An upload or a rename with these is refused (docs/api.md#names); a source's file has no one to tell.
    const folder = join(root, 'unreadable');
    mkdirSync(folder, { recursive: true });
    const names = { 'in\u200bvoice.txt': 'invoice.txt', 'bill\u202efdp.txt': 'billfdp.txt', 'line\u2028break.txt': 'linebreak.txt', 'bell\u0007\u0085.txt': 'bell.txt', '\ufeff.txt': '.txt' };
    for (const name of Object.keys(names)) writeFileSync(join(folder, name), `The file once named ${JSON.stringify(name)}.\n`);
    const p = await client.project('Unreadable names');
    const src = await client.add(p, { url: `file://${folder}` });
    expect((await client.passAfter(p, src.id, 0)).last_result).toMatchObject({ added: 5 });
    const docs = await client.settled(p, src.id, 5);
    expect(Object.fromEntries([...docs].map(([path, doc]) => [path, doc.filename]))).toEqual(names);
  });
});
