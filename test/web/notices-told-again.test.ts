/**
 * Notices told again (store/sql/notices.ts: a person's unread notice of the same kind and subject is updated, not
 * added to), through the built daemon: folder sources whose folder is gone fail, and at the third failed pass in a row
 * tell the project's owner (docs/sources.md "Who is told"); one that succeeds again and then fails three more times
 * tells again. The Notices page lists by the time last told, so the notice told again is first, under its id;
 * "Mark all read" marks what the page showed, not a notice told again after it was loaded.
 * A notice told again between two page loads moves to the first page: the older page neither repeats a notice nor
 * holds that one, and says it is on the first page (the older notices written into the SQLite database underneath
 * the daemon, as notices-pages.test.ts does: a source tells one per episode, far too slowly for a page of them).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { hiddenFields, loggedIn } from '../server/web-client.js';

const MINUTE = 60_000;

describe('notices told again', () => {
  const dirs = tempDirs('docsearch-notices');
  let root: string;
  let d: Daemon;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'] });
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  /** A new person with a project of their own, and their sources' client. */
  const owner = async () => {
    const user = await addUser(d);
    const client = new SourceClient(d, user.apiKey);
    return { user, client, project: await client.project('failing folders') };
  };
  type Owner = Awaited<ReturnType<typeof owner>>;
  /** An empty folder source of the person's project, after its first pass. */
  const source = async (o: Owner, name: string) => {
    const dir = join(root, name);
    mkdirSync(dir);
    const added = await o.client.add(o.project, { url: `file://${dir}`, every: '1h' });
    expect((await o.client.passAfter(o.project, added.id, 0)).status).toBe('active');
    return { o, id: added.id, dir };
  };
  type Source = Awaited<ReturnType<typeof source>>;
  /** Its folder gone, three passes fail: the third tells the owner. */
  const tell = async (s: Source) => {
    rmSync(s.dir, { recursive: true });
    for (let i = 0; i < 3; i++) expect((await s.o.client.sync(s.o.project, s.id)).status).toBe('error');
  };
  /** Its folder back, a pass succeeds (the failures in a row start again), then three fail: told again. */
  const tellAgain = async (s: Source) => {
    mkdirSync(s.dir);
    expect((await s.o.client.sync(s.o.project, s.id)).status).toBe('active');
    await tell(s);
  };
  const shown = (page: string) =>
    [...page.matchAll(/<li data-notice-id="([^"]+)"( class="unread")?>([\s\S]*?)<\/li>/g)].map((m) => ({ id: m[1]!, unread: m[2] !== undefined, folder: /file:\/\/\S*?\/([^/\s]+)\/? \(/.exec(m[3]!)?.[1] }));

  it('lists the notice told again first, under its id; "Mark all read" leaves one told again after the page unread', async () => {
    const o = await owner();
    const a = await source(o, 'a');
    const b = await source(o, 'b');
    const web = await loggedIn(d, o.user);
    await tell(a);
    await tell(b);
    const before = shown((await web.get('/notices')).text);
    expect(before.map((n) => n.folder)).toEqual(['b', 'a']);

    await tellAgain(a);
    const page = (await web.get('/notices')).text;
    const after = shown(page);
    expect(after.map((n) => [n.folder, n.unread])).toEqual([
      ['a', true],
      ['b', true],
    ]);
    expect(after.map((n) => n.id), 'the ids kept').toEqual([before[1]!.id, before[0]!.id]);
    expect(page).toContain('aria-label="2 unread"');

    // b told again after this page was loaded: marking all read from it leaves b unread, and b first.
    await tellAgain(b);
    const marked = await web.submit('/notices/read', hiddenFields(page, '/notices/read'));
    expect(marked.status).toBe(200);
    expect(shown(marked.text).map((n) => [n.folder, n.unread])).toEqual([
      ['b', true],
      ['a', false],
    ]);
    expect(marked.text).toContain('aria-label="1 unread"');
    // From that page, b is marked read too.
    const last = await web.submit('/notices/read', hiddenFields(marked.text, '/notices/read'));
    expect(shown(last.text).map((n) => n.unread)).toEqual([false, false]);
    expect(last.text).toContain('href="/notices" class="bell">Notices</a>');
  }, 4 * MINUTE);

  // Writes its 110 older notices into the daemon's SQLite file: this file is not among the suites run on PostgreSQL
  // (vitest.config.ts), and a run against PostgreSQL fails here rather than skip.
  it(
    'a notice told again between two page loads moves to the first page: the older page neither repeats nor holds it, and says so',
    async () => {
      const o = await owner();
      const c = await source(o, 'c');
      await tell(c);
      // 110 read notices told after c's first telling: the first page holds the newest 100, c is on the second.
      const userId = (await api(d, '/api/v1/me', { token: o.user.apiKey })).body.id as string;
      const older = withLibraryDb(d.dataDir, (db) => {
        const told = (db.prepare('select created_at from notices where user_id = ?').get(userId) as { created_at: number }).created_at;
        const made = Array.from({ length: 110 }, (_, i) => ({ id: `ntc_${(told + 1 + i).toString(36).padStart(9, '0')}${String(i).padStart(12, '0')}`, at: told + 1 + i, i }));
        const insert = db.prepare("insert into notices (id, user_id, kind, project_id, subject_id, message, link, created_at, read_at) values (?, ?, 'source.failing', null, ?, ?, null, ?, ?)");
        for (const n of made) insert.run(n.id, userId, `src_${n.i}`, `Notice number ${n.i}`, n.at, n.at);
        return made.map((n) => n.id).reverse();
      });
      const web = await loggedIn(d, o.user);
      const first = (await web.get('/notices')).text;
      expect(shown(first).map((n) => n.id)).toEqual(older.slice(0, 100));
      const next = /<a href="(\/notices\?cursor=[^"]+)" rel="next" class="next">/.exec(first)?.[1];
      expect(next).toBeDefined();

      // Told again before the next page is loaded: it is on the first page now, not on the older one.
      await tellAgain(c);
      const second = await web.get(next!.replace(/&amp;/g, '&'));
      expect(second.status).toBe(200);
      expect(shown(second.text).map((n) => n.id)).toEqual(older.slice(100));
      expect(second.text).toContain('<p class="notice" id="told-since">1 notice was told since this list was opened: it is at the top of the <a href="/notices">newest notices</a>, not on this page.</p>');
      const top = shown((await web.get('/notices')).text);
      expect(top[0]).toMatchObject({ folder: 'c', unread: true });
      expect(top.slice(1).map((n) => n.id)).toEqual(older.slice(0, 99));
    },
    4 * MINUTE,
  );
});
