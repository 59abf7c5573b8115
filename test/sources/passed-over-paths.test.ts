/**
 * A source item passed over for its path (a line break, or past the 2,048 bytes of UTF-8 a document's path may have:
 * src/core/storable-text.ts) is one of the source's item errors, with why, wherever those are shown (REST, `sources
 * show`, the Sources tab), on SQLite as on PostgreSQL; once the file is gone or renamed, the error is gone too —
 * whether the kind lists everything (folder) or only what changed (Git); a crawler never asks for the path it is
 * shown under, which no page has.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { apacheUnavailable } from '../helpers/apache.js';
import { apacheSources } from '../helpers/apache-sources.js';
import { addUser, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { gitWorkTree } from '../helpers/git-work.js';
import { type PgCluster, postgresUnavailable, startPostgres } from '../helpers/postgres.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { loggedIn } from '../server/web-client.js';

const MINUTE = 60_000;
const LINE_BREAK = 'passed over: its path has a line break';
const TOO_LONG = /^passed over: its path must be at most 2048 bytes in UTF-8 \(it is \d+; a character outside ASCII takes 2 to 4\)$/;
/** 12 folders of 80 CJK characters (240 bytes each, under a file name's 255): a path of ~2,900 bytes. */
const DEEP = Array.from({ length: 12 }, (_, i) => Array.from({ length: 80 }, (_, j) => String.fromCharCode(0x4e00 + i * 80 + j)).join(''));
const noPostgres = postgresUnavailable();

describe.each([
  { engine: 'SQLite', skip: null },
  { engine: 'PostgreSQL', skip: noPostgres },
])('a folder source with files it must pass over, on $engine', ({ engine, skip }) => {
  const dirs = tempDirs('docsearch-passed-over');
  let pg: PgCluster | undefined;
  let root: string;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;

  beforeAll(async () => {
    if (skip) return;
    root = dirs.make('root');
    pg = engine === 'PostgreSQL' ? await startPostgres() : undefined;
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'], ...(pg ? { databaseUrl: await pg.createDatabase() } : {}) });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await pg?.destroy();
    dirs.removeAll();
  });

  it.skipIf(skip !== null)(`lists each among its item errors, shown everywhere, until it is gone or renamed${skip ? ` (skipped: ${skip})` : ''}`, async () => {
    const dir = join(root, 'odd');
    mkdirSync(join(dir, ...DEEP), { recursive: true });
    writeFileSync(join(dir, ...DEEP, 'far.txt'), 'The far file talks about glaciers.');
    writeFileSync(join(dir, 'line\nbreak.txt'), 'The broken name talks about lighthouses.');
    writeFileSync(join(dir, 'near.txt'), 'The near file talks about meadows.');
    const project = await client.project('odd paths');
    const source = await client.add(project, { url: `file://${dir}` });

    const first = await client.sync(project, source.id);
    expect(first.status, JSON.stringify(first)).toBe('active');
    expect([...(await client.settled(project, source.id, 1)).keys()]).toEqual(['near.txt']);
    expect(first.last_result).toMatchObject({ listed: 3, failed: 2 });
    const errors = (await client.get(project, source.id)).item_errors!;
    expect(errors.count).toBe(2);
    const broken = errors.items.find((i) => i.error === LINE_BREAK);
    // Shown as U+FFFD where the line break is: what both engines store, and one line in a terminal.
    expect(broken?.path).toBe('line\ufffdbreak.txt');
    const long = errors.items.find((i) => i !== broken)!;
    expect(long.error).toMatch(TOO_LONG);
    // Its start and its end, within what a path may have.
    expect(long.path.startsWith(DEEP[0]!)).toBe(true);
    expect(long.path).toContain('…');
    expect(long.path.endsWith(`${DEEP[11]}/far.txt`)).toBe(true);
    expect(Buffer.byteLength(long.path)).toBeLessThanOrEqual(2048);

    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const shown = await runCli(['sources', 'show', source.id], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stderr).toContain(`item line\ufffdbreak.txt: ${LINE_BREAK}`);
    expect(shown.stderr).toContain(`/far.txt: passed over: its path must be at most 2048 bytes`);
    const tab = await (await loggedIn(d, user)).get(`/projects/${project}/sources`);
    expect(tab.text).toContain('2 items could not be read');
    expect(tab.text).toContain(`<span class="path">line\ufffdbreak.txt</span>: ${LINE_BREAK}`);

    // Passed over again, listed once each.
    const again = await client.sync(project, source.id);
    expect(again.last_result).toMatchObject({ listed: 3, failed: 2, unchanged: 1 });
    expect((await client.get(project, source.id)).item_errors?.count).toBe(2);

    // Renamed to a name it may have, and the deep file gone: no item error left, the renamed file indexed.
    renameSync(join(dir, 'line\nbreak.txt'), join(dir, 'line-break.txt'));
    rmSync(join(dir, DEEP[0]!), { recursive: true });
    const fixed = await client.sync(project, source.id);
    expect(fixed.status, JSON.stringify(fixed)).toBe('active');
    expect((await client.get(project, source.id)).item_errors).toEqual({ count: 0, items: [] });
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['line-break.txt', 'near.txt']);
  }, 3 * MINUTE);
});

const noApache = apacheUnavailable();

describe.skipIf(noApache !== null)(`Git and web sources with an item they must pass over${noApache ? ` (skipped: ${noApache})` : ''}`, () => {
  const dirs = tempDirs('docsearch-passed-over-git');
  const world = apacheSources([], 2 * MINUTE);
  afterAll(() => dirs.removeAll());

  it('lists it until a commit deletes it (a listing of what changed)', async () => {
    const { apache, client } = world;
    const work = dirs.make('work');
    const { commit } = gitWorkTree(apache.gitDir, 'odd', work);
    writeFileSync(join(work, 'kept.md'), 'A kept file about harbours.');
    writeFileSync(join(work, 'odd\nname.md'), 'An odd name about lanterns.');
    commit('two files');
    const project = await client.project('odd git');
    const source = await client.add(project, { url: `${apache.gitUrl}/private/odd.git`, options: { username: apache.davUser.name, password: apache.davUser.password } });

    await client.sync(project, source.id);
    expect([...(await client.settled(project, source.id, 1)).keys()]).toEqual(['kept.md']);
    expect((await client.get(project, source.id)).item_errors).toEqual({ count: 1, items: [expect.objectContaining({ path: 'odd\ufffdname.md', error: LINE_BREAK })] });

    // A commit that changes another file leaves it listed; the commit that deletes it clears it.
    writeFileSync(join(work, 'kept.md'), 'A kept file about harbours and piers.');
    commit('kept changed');
    const changed = await client.sync(project, source.id);
    expect(changed.last_result).toMatchObject({ listed: 1, changed: 1 });
    expect((await client.get(project, source.id)).item_errors?.count).toBe(1);
    rmSync(join(work, 'odd\nname.md'));
    commit('odd gone');
    await client.sync(project, source.id);
    expect((await client.get(project, source.id)).item_errors).toEqual({ count: 0, items: [] });
  }, 3 * MINUTE);

  it('asks a web site for the page itself again (its link is on a page that did not change), never for the path it is shown under', async () => {
    const { apache, client } = world;
    // 11 folders of 200 letters: a page path of ~2,230 bytes, which the site serves.
    const deep = `long/${Array.from({ length: 11 }, (_, i) => String.fromCharCode(97 + i).repeat(200)).join('/')}/far.html`;
    mkdirSync(join(apache.siteDir, deep, '..'), { recursive: true });
    writeFileSync(join(apache.siteDir, deep), '<html><body><p>The far page talks about glaciers.</p></body></html>');
    writeFileSync(join(apache.siteDir, 'long/index.html'), `<html><body><p>The start page talks about meadows.</p><a href="/${deep}">far</a></body></html>`);
    const project = await client.project('odd web');
    const source = await client.add(project, { kind: 'web', url: `${apache.siteUrl}/long/`, options: { delay_ms: 0 } });
    await client.passAfter(project, source.id, 0);
    const logged = apache.siteLog().length;
    await client.sync(project, source.id);
    const errors = (await client.get(project, source.id)).item_errors!;
    expect(errors.count, JSON.stringify(errors)).toBe(1);
    expect(errors.items[0]!.path.endsWith('/far.html')).toBe(true);
    expect(errors.items[0]!.error).toMatch(TOO_LONG);
    const requests = apache.siteLog().slice(logged).split('\n').filter((l) => l.startsWith('GET /long/'));
    expect(requests.some((l) => l.startsWith(`GET /${deep} `))).toBe(true);
    // The shown path's "…": a page the site never had.
    expect(requests.filter((l) => l.includes('%E2%80%A6'))).toEqual([]);
    rmSync(join(apache.siteDir, 'long', 'a'.repeat(200)), { recursive: true });
    await client.sync(project, source.id);
    expect((await client.get(project, source.id)).item_errors).toEqual({ count: 0, items: [] });
  }, 3 * MINUTE);
});
