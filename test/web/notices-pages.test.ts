/**
 * The bell's page (`/notices`) with more notices than one page holds, through the real daemon and its HTML: the
 * newest 100, then a link to the older ones (a cursor, as the Audit log's "Older events"), which lists the rest and
 * links back to the newest; "Mark all read" while any notice is unread, shown on the page or not, and it marks them
 * all; a page link that was altered, or one of another list, starts again from the newest and says so, as the
 * Documents page does. The notices are written into the library's SQLite database underneath the daemon: sources'
 * alerts make one per episode, far too slowly for 130.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { hiddenFields, loggedIn } from '../server/web-client.js';

const COUNT = 130;
/** The oldest this many are unread: none of them on the first page. */
const UNREAD = 5;

describe('the Notices page with more than a page of notices', () => {
  let d: Daemon;
  let user: TestUser;
  /** The notices' ids, the newest first. */
  let ids: string[];
  daemonForSuite(async (started) => {
    d = started;
    await addUser(d);
    user = await addUser(d);
    const userId = (await api(d, '/api/v1/me', { token: user.apiKey })).body.id as string;
    const start = Date.now() - COUNT * 60_000;
    const made = Array.from({ length: COUNT }, (_, i) => ({ id: `ntc_${(start + i * 60_000).toString(36).padStart(9, '0')}${String(i).padStart(12, '0')}`, at: start + i * 60_000, i }));
    withLibraryDb(d.dataDir, (db) => {
      const insert = db.prepare('insert into notices (id, user_id, kind, project_id, subject_id, message, link, created_at, read_at) values (?, ?, ?, null, ?, ?, null, ?, ?)');
      for (const n of made) insert.run(n.id, userId, 'source.failing', `src_${n.i}`, `Notice number ${n.i}`, n.at, n.i < UNREAD ? null : n.at + 1000);
    });
    ids = made.map((n) => n.id).reverse();
  });

  const shown = (text: string) => [...text.matchAll(/data-notice-id="([^"]+)"/g)].map((m) => m[1]);
  const olderLink = (text: string) => /<a href="(\/notices\?cursor=[^"]+)" rel="next" class="next">Older notices →<\/a>/.exec(text)?.[1];

  it('lists the newest 100, links to the older ones, and from there back to the newest', async () => {
    const web = await loggedIn(d, user);
    const first = await web.get('/notices');
    expect(first.status).toBe(200);
    expect(shown(first.text)).toEqual(ids.slice(0, 100));
    // Five unread notices, none of them on this page: they can still be marked read from here.
    expect(first.text).toContain('<button type="submit">Mark all read</button>');
    expect(first.text).not.toContain('Newest notices');
    const older = olderLink(first.text);
    expect(older).toBeDefined();

    const second = await web.get(older!);
    expect(second.status).toBe(200);
    expect(shown(second.text)).toEqual(ids.slice(100));
    expect(second.text.match(/<li data-notice-id="[^"]+" class="unread">/g)).toHaveLength(UNREAD);
    expect(olderLink(second.text)).toBeUndefined();
    expect(second.text).toContain('<a href="/notices">← Newest notices</a>');

    // "Mark all read" on the first page marks the older pages' unread ones too: all were told before its newest.
    const marked = await web.submit('/notices/read', hiddenFields(first.text, '/notices/read'));
    expect(marked.text).toContain('href="/notices" class="bell">Notices</a>');
    expect((await web.get(older!)).text).not.toMatch(/<li data-notice-id="[^"]+" class="unread">/);
  });

  it('a page link that was altered, or one of another list, starts again from the newest, saying so', async () => {
    const web = await loggedIn(d, user);
    const cursor = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64url');
    const at = Date.now();
    for (const given of [
      'garbage',
      // A notice's id alone (the cursor of a list by id: a notice told again would be out of place in it), another list's id.
      cursor(ids[99]),
      cursor(`aud_${ids[0]!.slice(4)}`),
      // The place of a notice, its id or its times altered.
      cursor([at, `aud_${ids[99]!.slice(4)}`, at]),
      cursor([at, ids[99], -1]),
      cursor([String(at), ids[99], at]),
      cursor([at, ids[99]]),
    ]) {
      const page = await web.get(`/notices?cursor=${encodeURIComponent(given)}`);
      expect(page.status, given).toBe(200);
      expect(page.text, given).toContain('<p class="error" role="alert">That page link is out of date; showing the newest notices.</p>');
      expect(shown(page.text)).toEqual(ids.slice(0, 100));
    }
  });
});
