/**
 * A source whose passes keep failing tells its people once (docs/sources.md "Who is told"; sources/scheduler.ts
 * calls `alerts.failing` when the failures in a row reach FAILING_AFTER, 3, of sources/alerts.ts), through the built
 * daemon, a real Apache WebDAV folder that is stopped and started again, and a real postfix:
 * - two failed passes tell no one; the third tells the project's owner and editor, not its viewer: one e-mail each
 *   naming the source and the error, and a notice in the bell; the fourth tells no one again;
 * - the failures in a row and the error are shown (API, Admin → Sources);
 * - the server back, a pass succeeds and the count starts again: three new failures tell again, by mail to whoever
 *   read the first notice, and by the bell's notice updated for whoever left it unread (one unread notice per
 *   person and source, no second mail while it waits: server/source-alerts.ts, store/sql/notices.ts).
 * Passes are asked for with "sync now" (`POST …/sync`), which makes a failing source due at once, backoff or not.
 * Which pass did what is read from the daemon's log (`source.failed` with `failures`, `source.alerted`): one pass
 * of a source runs at a time and logs in order, so an alert made at a pass is logged before the next pass starts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';
import { SourceClient, type SourceWire } from '../helpers/sources.js';
import { loggedIn, type WebClient } from '../server/web-client.js';

const MINUTE = 60_000;
const SKIP = apacheUnavailable() ?? postfixUnavailable();

/** A log line of the daemon, as far as this test reads it. */
interface LogEvent {
  event?: string;
  source_id?: string;
  failures?: number;
  notified?: number;
  new_notices?: number;
  kind?: string;
}

interface ShownNotice {
  id: string;
  unread: boolean;
  message: string;
  at: string;
}

const unescape = (s: string) =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

describe.skipIf(SKIP !== null)(`a source whose passes keep failing${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let apache: Apache;
  let postfix: Postfix;
  let d: Daemon;
  let admin: TestUser;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let client: SourceClient;
  let away = false;

  beforeAll(async () => {
    [apache, postfix] = await Promise.all([startApache(), startPostfix()]);
    d = await startDaemon({ args: ['--smtp-url', postfix.url, '--public-url', 'http://docs.test.internal', '--sources-allow-private'] });
    // The first account is the admin (Admin → Sources, the outbox); the others are the project's people.
    admin = await addUser(d);
    owner = await addUser(d);
    editor = await addUser(d);
    viewer = await addUser(d);
    client = new SourceClient(d, owner.apiKey);
  }, 2 * MINUTE);
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail' && d) process.stderr.write(`--- the daemon's last log lines:\n${`${d.stdout()}\n${d.stderr()}`.split('\n').slice(-60).join('\n')}\n`);
  });
  afterAll(async () => {
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    if (away) await apache?.resume().catch(() => undefined);
    await Promise.all([apache?.stop(), postfix?.stop()]);
  });

  it('tells its owners and editors once, at the third failed pass in a row, by mail and in the bell; a pass that succeeds starts the count again', async () => {
    // A WebDAV folder with one file; the project's owner adds it, shared with an editor and a viewer.
    const folder = join(apache.davDir, 'alerts');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'runbook.txt'), 'The runbook says to check the pumps every morning.');
    apache.own(folder);
    apache.own(join(folder, 'runbook.txt'));
    const projectName = 'pump station';
    const project = await client.project(projectName);
    for (const [who, role] of [[editor, 'editor'], [viewer, 'viewer']] as const) {
      const shared = await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { email: who.email, role } });
      expect(shared.status, JSON.stringify(shared.body)).toBe(201);
    }
    const added = await client.add(project, { kind: 'webdav', url: `${apache.davUrl}/alerts/`, options: { username: apache.davUser.name, password: apache.davUser.password } });
    const id = added.id;
    const url = added.url as string;
    const subject = `Source needs attention: ${url} in ${projectName}`;
    const sourcesLink = `http://docs.test.internal/projects/${project}/sources`;

    /** This source's lines of the daemon's log so far, in order. */
    const logged = (): LogEvent[] =>
      d
        .stdout()
        .split('\n')
        .flatMap((line) => {
          if (!line.includes(id)) return [];
          try {
            const e = JSON.parse(line) as LogEvent;
            return e.source_id === id ? [e] : [];
          } catch {
            return [];
          }
        });
    const count = (event: string) => logged().filter((e) => e.event === event).length;
    /** Asks for a pass now and waits until the daemon logged its `event` (the `count(event)+1`-th of this source). */
    const pass = async (event: 'source.failed' | 'source.synced'): Promise<{ logged: LogEvent; source: SourceWire }> => {
      const before = count(event);
      const asked = await api(d, `/api/v1/projects/${project}/sources/${id}/sync`, { token: owner.apiKey, body: {} });
      expect(asked.status, JSON.stringify(asked.body)).toBe(202);
      const line = await waitFor(() => logged().filter((e) => e.event === event)[before], MINUTE, `pass ${before + 1} of the source logging ${event}`);
      return { logged: line, source: await client.get(project, id) };
    };
    const failedPass = async (failures: number): Promise<SourceWire> => {
      const { logged: line, source } = await pass('source.failed');
      expect(line.failures, `the ${failures}th failed pass in a row`).toBe(failures);
      expect(source.status).toBe('error');
      expect(source.error).toMatch(new RegExp(`^the WebDAV folder ${url.replace(/[.]/g, '\\.')} could not be read: .*ECONNREFUSED`));
      return source;
    };
    /** The source-alert mails the outbox queued for this project (every mail is queued there before it is sent), by recipient. */
    const queuedAlerts = async (): Promise<string[]> => {
      const outbox = await api(d, '/api/v1/admin/mail?limit=200', { token: admin.apiKey });
      expect(outbox.status, JSON.stringify(outbox.body)).toBe(200);
      return (outbox.body.mail as { kind: string; to: string; subject: string }[])
        .filter((m) => m.kind === 'source_alert' && m.subject === subject)
        .map((m) => m.to)
        .sort();
    };
    const delivered = (who: TestUser) => postfix.messages().filter((m) => m.to.includes(who.email) && m.subject === subject);
    const web = new Map<TestUser, WebClient>();
    const page = async (who: TestUser, path: string) => {
      if (!web.has(who)) web.set(who, await loggedIn(d, who));
      const res = await web.get(who)!.get(path);
      expect(res.status, `${who.email} ${path}`).toBe(200);
      return res.text;
    };
    const notices = async (who: TestUser): Promise<ShownNotice[]> =>
      [...(await page(who, '/notices')).matchAll(/<li data-notice-id="([^"]+)"( class="unread")?>([\s\S]*?)<\/li>/g)].map((m) => ({
        id: m[1]!,
        unread: m[2] !== undefined,
        message: unescape(m[3]!.replace(/^<span class="badge warn">new<\/span> /, '').split('\n')[0]!.trim()),
        at: /<time datetime="([^"]+)">/.exec(m[3]!)![1]!,
      }));
    const unreadInBell = async (who: TestUser): Promise<number> => {
      const text = await page(who, '/projects');
      if (text.includes('href="/notices" class="bell">Notices</a>')) return 0;
      const badge = /href="\/notices" class="bell unread">Notices <span class="badge warn" aria-label="(\d+) unread">\1<\/span>/.exec(text);
      expect(badge, `${who.email}'s bell`).not.toBeNull();
      return Number(badge![1]);
    };
    /** The source's row on Admin → Sources (state, why, failures in a row), as text. */
    const adminRow = async (): Promise<string> => {
      const row = new RegExp(`<tr data-source-id="${id}">([\\s\\S]*?)</tr>`).exec(await page(admin, '/admin/sources'));
      expect(row, 'the source on Admin → Sources').not.toBeNull();
      return unescape(row![1]!);
    };

    // Its first pass, the server up, takes the file.
    const first = await waitFor(() => logged().find((e) => e.event === 'source.synced' || e.event === 'source.failed'), MINUTE, 'the first pass');
    expect(first.event, JSON.stringify(await client.get(project, id))).toBe('source.synced');
    expect((await client.get(project, id)).last_result).toMatchObject({ added: 1, failed: 0 });

    // The server stops: every pass fails. Two in a row tell no one.
    await apache.halt();
    away = true;
    await failedPass(1);
    await failedPass(2);
    expect(await adminRow()).toContain('2 failed passes in a row');
    expect(await queuedAlerts()).toEqual([]);
    expect(await notices(owner)).toEqual([]);

    // The third tells the owner and the editor, once each: the log says so after the third failure, not before.
    const third = await failedPass(3);
    const alerted = await d.logLine((l) => l.includes('"source.alerted"') && l.includes(id), 30_000);
    expect(JSON.parse(alerted)).toMatchObject({ kind: 'source.failing', notified: 2, new_notices: 2 });
    const events = logged();
    const thirdAt = events.findIndex((e) => e.event === 'source.failed' && e.failures === 3);
    expect(events.findIndex((e) => e.event === 'source.alerted'), 'no alert before the third failure').toBeGreaterThan(thirdAt);
    const reason = `its last 3 passes failed: ${third.error}`;
    expect(await queuedAlerts()).toEqual([owner.email, editor.email].sort());
    for (const who of [owner, editor]) {
      const mail = await postfix.waitFor(who.email, (m) => m.subject === subject);
      expect(mail.text, who.email).toContain(reason);
      expect(mail.text).toContain(sourcesLink);
      // The bell: one unread notice, naming the source, its project and the error, linking to the Sources tab.
      expect(await unreadInBell(who)).toBe(1);
      const shown = await notices(who);
      expect(shown.map((n) => [n.message, n.unread])).toEqual([[`${url} (${projectName}): ${reason}`, true]]);
    }
    expect(await page(owner, '/notices')).toContain(`href="/projects/${project}/sources"`);
    // The failures and the error are on the source: the API's error, the Sources tab, Admin → Sources.
    expect(unescape(await page(owner, `/projects/${project}/sources`))).toContain(`The last pass failed: ${third.error}`);
    const row = await adminRow();
    expect(row).toContain('error');
    expect(row).toContain(third.error!);
    expect(row).toContain('3 failed passes in a row');

    // The fourth tells no one: no new alert (the next pass below starts only after this one ended), no second mail,
    // and the notice still speaks of the third.
    await failedPass(4);
    expect(await adminRow()).toContain('4 failed passes in a row');

    // The server back: the next pass succeeds, finds the file unchanged, and the failures in a row are gone.
    await apache.resume();
    away = false;
    const back = await pass('source.synced');
    expect(back.source.status).toBe('active');
    expect(back.source.error).toBeUndefined();
    expect(back.source.last_result).toMatchObject({ added: 0, deleted: 0, unchanged: 1, failed: 0 });
    expect(count('source.alerted'), 'alerts after four failed passes').toBe(1);
    expect(await queuedAlerts()).toEqual([owner.email, editor.email].sort());
    expect((await notices(editor)).map((n) => n.message)).toEqual([`${url} (${projectName}): ${reason}`]);
    const healed = await adminRow();
    expect(healed).toContain('active');
    expect(healed).not.toContain('failed passes in a row');
    expect(healed).not.toContain('ECONNREFUSED');

    // The owner reads the notice; the editor leaves it unread.
    const editorNotice = (await notices(editor))[0]!;
    await page(owner, '/notices');
    const read = await web.get(owner)!.submit('/notices/read', { _csrf: web.get(owner)!.csrf });
    expect(read.status).toBe(200);
    expect(await unreadInBell(owner)).toBe(0);

    // The server stops again: the count started again at the good pass, so two failures tell no one and the third
    // tells again.
    await apache.halt();
    away = true;
    await failedPass(1);
    await failedPass(2);
    expect(await adminRow()).toContain('2 failed passes in a row');
    const again = await failedPass(3);
    await waitFor(() => count('source.alerted') === 2, 30_000, 'the second episode told');
    const second = logged().filter((e) => e.event === 'source.alerted')[1]!;
    // Both are told; only the owner's notice is new (the editor's unread one is updated): one more mail, the owner's.
    expect(second).toMatchObject({ kind: 'source.failing', notified: 2, new_notices: 1 });
    expect(await queuedAlerts()).toEqual([owner.email, owner.email, editor.email].sort());
    await waitFor(() => delivered(owner).length === 2, 30_000, "the owner's second mail");
    expect(delivered(owner)[1]!.text).toContain(`its last 3 passes failed: ${again.error}`);
    expect(await unreadInBell(owner)).toBe(1);
    expect((await notices(owner)).map((n) => n.unread)).toEqual([true, false]);
    const editorNow = await notices(editor);
    expect(editorNow).toHaveLength(1);
    expect(editorNow[0]!).toMatchObject({ id: editorNotice.id, unread: true, message: `${url} (${projectName}): its last 3 passes failed: ${again.error}` });
    expect(Date.parse(editorNow[0]!.at), 'the unread notice updated').toBeGreaterThan(Date.parse(editorNotice.at));
    expect(delivered(editor)).toHaveLength(1);

    // The viewer was never told: no mail queued or delivered, an empty bell.
    expect(postfix.messages().filter((m) => m.to.includes(viewer.email) && m.subject === subject)).toHaveLength(0);
    expect(await unreadInBell(viewer)).toBe(0);
    expect(await notices(viewer)).toEqual([]);
  }, 3 * MINUTE);
});
