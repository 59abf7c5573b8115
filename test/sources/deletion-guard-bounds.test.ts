/**
 * The deletion guard's two thresholds are "more than" (docs/sources.md, "The deletion guard"): a pass deleting
 * exactly `--sources-delete-guard-count` documents, or exactly `--sources-delete-guard-percent` % of them, deletes
 * them; one more of either holds them only when the other is past its threshold too. Confirming held deletions
 * (`sync` with confirm, or resuming the source) is in the audit log as `source.changed` with `deletions_confirmed`
 * (docs/operations.md).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

describe('the deletion guard at its thresholds', () => {
  const dirs = tempDirs('docsearch-guard-bounds');
  let root: string;
  let d: Daemon;
  let client: SourceClient;
  /** The first account: an admin, who reads the audit log. */
  let admin: TestUser;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1', '--sources-delete-guard-count', '2', '--sources-delete-guard-percent', '25'] });
    admin = await addUser(d);
    client = new SourceClient(d, admin.apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  /** The details of the source's `source.changed` audit events. */
  async function changes(source: string): Promise<Record<string, unknown>[]> {
    const res = await api(d, `/api/v1/audit-events?type=source.changed&target=${source}`, { token: admin.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.events as { details: Record<string, unknown> }[]).map((e) => e.details);
  }

  /** A folder source of `n` notes, its first pass done and its documents indexed. */
  async function notes(name: string, n: number): Promise<{ dir: string; project: string; source: string }> {
    const dir = join(root, name);
    mkdirSync(dir);
    for (let i = 0; i < n; i++) writeFileSync(join(dir, `note-${i}.txt`), `Note ${i} of the ${name} set, on subject ${i * 13}.`);
    const project = await client.project(name);
    const source = (await client.add(project, { url: `file://${dir}`, every: '1h' })).id;
    await client.passAfter(project, source, 0);
    await client.settled(project, source, n);
    return { dir, project, source };
  }

  it('deletes exactly --sources-delete-guard-count documents (a share past the percent), and holds one more', async () => {
    const { dir, project, source } = await notes('count', 8);
    // 2 of 8: 25 % is not more than 25 %, so take 2 of 6 after this: 33 %, past the percent; 2 is not more than 2.
    for (const i of [0, 1]) rmSync(join(dir, `note-${i}.txt`));
    const first = await client.sync(project, source);
    expect(first.status).toBe('active');
    expect(first.last_result).toMatchObject({ deleted: 2 });
    for (const i of [2, 3]) rmSync(join(dir, `note-${i}.txt`));
    const second = await client.sync(project, source);
    expect(second.status).toBe('active');
    expect(second.last_result).toMatchObject({ deleted: 2, unchanged: 4 });
    expect((await client.documents(project, source)).size).toBe(4);
    // 3 of 4: more than 2 and more than 25 %: held.
    for (const i of [4, 5, 6]) rmSync(join(dir, `note-${i}.txt`));
    const held = await client.sync(project, source);
    expect(held.status).toBe('paused');
    expect(held.paused_reason).toMatch(/would remove 3 of the source's 4 documents/);
    expect((await client.documents(project, source)).size).toBe(4);
    expect(await changes(source)).toEqual([]);
    // Confirmed with sync: removed, and audited.
    const confirmed = await client.sync(project, source, { confirm: true });
    expect(confirmed.status).toBe('active');
    expect(confirmed.last_result).toMatchObject({ deleted: 3, unchanged: 1 });
    expect(await changes(source)).toEqual([expect.objectContaining({ status: 'active', deletions_confirmed: true })]);
  }, 240_000);

  it('deletes exactly --sources-delete-guard-percent % of the documents (a count past the count), and holds one more', async () => {
    const { dir, project, source } = await notes('percent', 12);
    // 3 of 12: 25 %, not more than 25 % (3 is more than 2).
    for (const i of [0, 1, 2]) rmSync(join(dir, `note-${i}.txt`));
    const exact = await client.sync(project, source);
    expect(exact.status).toBe('active');
    expect(exact.last_result).toMatchObject({ deleted: 3, unchanged: 9 });
    expect((await client.documents(project, source)).size).toBe(9);
    // 3 of 9: 33 %, and 3 is more than 2: held.
    for (const i of [3, 4, 5]) rmSync(join(dir, `note-${i}.txt`));
    const held = await client.sync(project, source);
    expect(held.status).toBe('paused');
    expect(held.paused_reason).toMatch(/would remove 3 of the source's 9 documents \(33 %, more than 25 % and more than 2\)/);
    expect((await client.documents(project, source)).size).toBe(9);
    // Confirmed by resuming the source: audited, and the pass it starts removes them.
    const since = Date.now();
    expect((await api(d, `/api/v1/projects/${project}/sources/${source}`, { method: 'PATCH', token: admin.apiKey, body: { status: 'active' } })).status).toBe(200);
    expect(await changes(source)).toEqual([expect.objectContaining({ status: 'active', deletions_confirmed: true })]);
    expect((await client.passAfter(project, source, since)).status).toBe('active');
    expect((await client.documents(project, source)).size).toBe(6);
  }, 240_000);
});
