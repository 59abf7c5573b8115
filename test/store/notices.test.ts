/**
 * The bell's notices (NoticeStore) on both engines, with a clock the test moves: a notice told again (its unread one
 * updated, its id kept) is listed first, by the time it was last told; pages follow one another by that time and the
 * id (the ids of one millisecond break the tie) and neither repeat nor skip a notice, also when one is told again
 * between two pages (it moves to the top: the older pages count it instead); "Mark all read" up to a time leaves
 * those told later unread; the oldest read ones go by the time they were last told.
 */
import { beforeAll, expect, it } from 'vitest';
import { type Notice, NoticeStore } from '../../src/store/sql/notices.js';
import { UserStore } from '../../src/store/sql/users.js';
import { sqlitePlans } from '../helpers/query-plans.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const failing = (subject: string) => ({ kind: 'source.failing', projectId: null, subjectId: subject, message: `${subject} keeps failing`, link: null });

describeEachEngine('notices', (suite) => {
  let t = Date.UTC(2031, 0, 1);
  let notices: NoticeStore;
  let users: UserStore;
  let n = 0;
  /** A person of their own for each test. */
  const person = async () => (await users.create(`notices-${suite.engine}-${n++}@example.com`, 'h'))!.id;
  /** Tells `userId` of `subject` at the clock's time, then moves the clock on a minute. */
  const tell = async (userId: string, subject: string) => {
    const fresh = await notices.notify([userId], failing(subject));
    t += 60_000;
    return fresh;
  };
  const subjects = (list: Notice[]) => list.map((x) => x.subjectId);

  beforeAll(() => {
    users = new UserStore(suite.handle().db, () => t);
    notices = new NoticeStore(suite.handle().db, () => t);
  });

  it('lists a notice told again first, under the id it had, with the time it was told again', async () => {
    const ada = await person();
    await tell(ada, 'A');
    await tell(ada, 'B');
    const [b, a] = await notices.list(ada, 10);
    expect(await tell(ada, 'A'), 'told again: no new notice').toEqual([]);
    const now = await notices.list(ada, 10);
    expect(subjects(now)).toEqual(['A', 'B']);
    expect(now[0]).toMatchObject({ id: a!.id, createdAt: b!.createdAt + 60_000, readAt: null });
    expect(now[1]).toEqual(b);
  });

  it('pages by the time last told and the id: no notice twice, none left out, ties included', async () => {
    const bo = await person();
    // Seven notices, four of them told in the same millisecond (a source alert tells its people one after another).
    for (const s of ['s1', 's2']) await tell(bo, s);
    for (const s of ['s3', 's4', 's5', 's6']) await notices.notify([bo], failing(s));
    t += 60_000;
    await tell(bo, 's7');
    await tell(bo, 's1');
    const all = await notices.list(bo, 100);
    // The order of the ids within a millisecond is the engine's (PostgreSQL's collation); the walk below keeps to it.
    expect(subjects(all).slice(0, 2)).toEqual(['s1', 's7']);
    expect(subjects(all).slice(2, 6).sort()).toEqual(['s3', 's4', 's5', 's6']);
    expect(subjects(all).slice(6)).toEqual(['s2']);
    const walked: Notice[] = [];
    for (let page = await notices.list(bo, 2); page.length > 0; ) {
      walked.push(...page);
      const last = page.at(-1)!;
      page = await notices.list(bo, 2, { at: last.createdAt, id: last.id });
    }
    expect(walked).toEqual(all);
  });

  it('a notice told again between two pages moves to the top: the next page neither repeats nor holds it, and counts it', async () => {
    const cy = await person();
    for (const s of ['a', 'b', 'c', 'd', 'e']) await tell(cy, s);
    const first = await notices.list(cy, 2);
    expect(subjects(first)).toEqual(['e', 'd']);
    const since = first[0]!.createdAt;
    // Told again after the first page was read: "b", on the next page, and "e", on the first.
    await tell(cy, 'b');
    await tell(cy, 'e');
    const last = first.at(-1)!;
    expect(subjects(await notices.list(cy, 10, { at: last.createdAt, id: last.id }))).toEqual(['c', 'a']);
    expect(await notices.toldSince(cy, since)).toBe(2);
    expect(subjects(await notices.list(cy, 10))).toEqual(['e', 'b', 'd', 'c', 'a']);
  });

  it('"Mark all read" up to a time leaves a notice told again since unread', async () => {
    const di = await person();
    await tell(di, 'A');
    await tell(di, 'B');
    const through = (await notices.list(di, 1))[0]!.createdAt;
    await tell(di, 'A');
    expect(await notices.markRead(di, through)).toBe(1);
    expect((await notices.list(di, 10)).map((x) => [x.subjectId, x.readAt === null])).toEqual([
      ['A', true],
      ['B', false],
    ]);
    expect(await notices.unreadCount(di)).toBe(1);
    expect(await notices.markRead(di)).toBe(1);
    expect(await notices.unreadCount(di)).toBe(0);
  });

  it('keeps the 200 last told: a read notice told again late outlives older ones made after it', async () => {
    const ed = await person();
    await tell(ed, 'X');
    for (let i = 1; i <= 5; i++) await tell(ed, `O${i}`);
    await tell(ed, 'X');
    await notices.markRead(ed);
    for (let i = 0; i < 196; i++) await tell(ed, `N${i}`);
    const kept = subjects(await notices.list(ed, 300));
    expect(kept).toHaveLength(200);
    expect(kept).toContain('X');
    expect(kept).not.toContain('O1');
    expect(kept).not.toContain('O2');
    expect(kept.slice(-4)).toEqual(['X', 'O5', 'O4', 'O3']);
  }, 60_000);

  it("a page is read through the person's index (SQLite's plan; the sort is of one person's few hundred)", async () => {
    const fi = await person();
    await tell(fi, 'A');
    const plans = await sqlitePlans(suite.handle().db, (db) => new NoticeStore(db, () => t).list(fi, 101, { at: t, id: 'ntc_zzzzzzzzzzzzzzzzzzzzz' }));
    if (plans) expect(plans[0]!.join('\n')).toMatch(/SEARCH notices USING INDEX notices_user \(user_id=\?\)/);
  });
});
