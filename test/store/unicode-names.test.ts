/**
 * Names stored decomposed (NFD, as a Mac writes them: a label or project named before names were composed on write,
 * a path or metadata kept as sent) are the names typed composed (NFC), on both engines, with no migration: a lookup
 * matches either spelling, and a name in the other spelling is taken (docs/api.md#names).
 */
import { expect, it } from 'vitest';
import { Filters, normalFilters } from '../../src/core/filters.js';
import { newId } from '../../src/core/ids.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { GroupStore } from '../../src/store/sql/groups.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { LabelStore } from '../../src/store/sql/labels.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');

describeEachEngine('names stored decomposed', ({ handle }) => {
  const now = () => Date.UTC(2031, 0, 1);
  const stores = () => {
    const db = handle().db;
    return { db, labels: new LabelStore(db, now), projects: new ProjectStore(db, now), groups: new GroupStore(db, now), documents: new DocumentStore(db, new JobStore(db, now), now), users: new UserStore(db, now) };
  };

  it('a label, a project and a group named decomposed are the names typed composed: found by them, and no twin is made', async () => {
    const { db, labels, projects, groups, users } = stores();
    const user = (await users.create('unicode-names@example.com', 'h'))!.id;
    const old = (await projects.create(user, { name: NFD('Müller') }))!;
    expect(await projects.create(user, { name: NFC('Müller') })).toBeNull();
    const other = (await projects.create(user, { name: 'Other' }))!;
    expect(await projects.update(other.id, { name: NFC('müller') })).toBe('conflict');
    expect((await projects.update(old.id, { name: NFC('Müller') })) as { name: string }).toMatchObject({ name: NFC('Müller') });

    const draft = (await labels.create(old.id, NFD('Entwürfe')))!;
    expect(await labels.create(old.id, NFC('ENTWÜRFE').replace('Ü', 'ü'))).toBeNull();
    expect((await labels.byName(old.id, NFC('Entwürfe')))?.id).toBe(draft.id);
    expect((await labels.ensure(old.id, [NFC('Entwürfe')])).map((l) => l.id)).toEqual([draft.id]);
    expect([...(await labels.idsByName([old.id], [NFC('entwürfe')])).values()]).toEqual([[draft.id]]);
    const café = (await labels.create(old.id, NFC('Café')))!;
    expect(await labels.update(café.id, { name: NFC('Entwürfe') })).toBe('conflict');
    expect((await labels.list([old.id])).map((l) => l.id).sort()).toEqual([draft.id, café.id].sort());

    // A group made before (by SSO or an admin, in a Mac's spelling).
    await db.insertInto('groups').values({ id: newId('grp', now()), name: NFD('Bücher'), description: '', source: 'local', created_at: now(), updated_at: now() }).execute();
    expect(await groups.create(NFC('Bücher'))).toBeNull();
    expect((await groups.findByName(NFC('Bücher')))?.name).toBe(NFD('Bücher'));
    expect((await groups.create(NFD('Zürich')))?.name).toBe(NFC('Zürich'));
  });

  it('a document with a decomposed path, file name, metadata and label is listed by each typed composed, and the other way round', async () => {
    const { labels, projects, documents, users } = stores();
    const user = (await users.create('unicode-paths@example.com', 'h'))!.id;
    for (const [stored, typed] of [[NFD, NFC], [NFC, NFD]] as const) {
      const project = (await projects.create(user, { name: `Paths ${stored('é').length}` }))!.id;
      const { document } = await documents.createQueued({
        userId: user,
        projectId: project,
        filename: stored('Résumé.txt'),
        path: stored('Ordner Übersicht/Résumé.txt'),
        contentType: 'text/plain',
        sizeBytes: 1,
        sha256: String(stored('é').length).repeat(64),
        metadata: { team: stored('Müller'), [stored('Größe')]: 'x' },
      });
      await labels.add([document.id], (await labels.ensure(project, [stored('Entwürfe')])).map((l) => l.id), project);
      const listed = async (filter: Parameters<DocumentStore['list']>[1]) => (await documents.list([project], filter, 10)).documents.map((d) => d.id);
      const narrow = (f: unknown) => ({ narrow: normalFilters(Filters.parse(f)) });
      const what = `stored ${stored === NFD ? 'NFD' : 'NFC'}`;
      expect(await listed({ path: typed('Ordner Übersicht/Résumé.txt') }), what).toEqual([document.id]);
      expect(await listed({ filename: typed('résumé') }), what).toEqual([document.id]);
      expect(await listed(narrow({ path_prefix: typed('Ordner Übersicht/') })), what).toEqual([document.id]);
      expect(await listed(narrow({ labels: typed('entwürfe') })), what).toEqual([document.id]);
      expect(await listed(narrow({ metadata: { team: typed('Müller') } })), what).toEqual([document.id]);
      expect(await listed(narrow({ metadata: { team: { $in: [typed('Müller')] } } })), what).toEqual([document.id]);
      expect(await listed(narrow({ metadata: { [typed('Größe')]: 'x' } })), what).toEqual([document.id]);
    }
  });
});
