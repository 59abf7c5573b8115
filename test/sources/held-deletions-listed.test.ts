/**
 * The deletion guard counts every document it holds and names the first 500 by path (docs/sources.md, `held_deletions`
 * in the API): a folder source of 503 small files, 502 of them gone. The guard's pass runs as soon as the first pass
 * has made the documents (queued for indexing, which the hold does not wait for).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;
const LISTED = 500;

describe('the deletion guard holding more documents than it names', () => {
  const dirs = tempDirs('docsearch-held-listed');
  let root: string;
  let d: Daemon;
  let client: SourceClient;
  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  it(`counts all ${LISTED + 2} and names the first ${LISTED} by path, each with its document`, async () => {
    const dir = join(root, 'many');
    mkdirSync(dir);
    // Written in no particular order; named so that path order is plain to read (note-000 … note-502).
    const names = Array.from({ length: LISTED + 3 }, (_, i) => `note-${String(i).padStart(3, '0')}.txt`);
    for (const [i, name] of [...names.entries()].reverse()) writeFileSync(join(dir, name), `Note ${i}.\n`);
    const project = await client.project('many held');
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    expect((await client.passAfter(project, source.id, 0, 3 * MINUTE)).last_result).toMatchObject({ added: names.length, failed: 0 });
    const made = await client.documents(project, source.id);
    expect(made.size).toBe(names.length);

    const gone = names.slice(0, -1);
    for (const name of gone) rmSync(join(dir, name));
    const paused = await client.sync(project, source.id, { timeoutMs: 3 * MINUTE });
    expect(paused.status).toBe('paused');
    expect(paused.paused_reason).toMatch(/would remove 502 of the source's 503 documents/);
    const held = paused.held_deletions as { count: number; items: { path: string; document_id: string; filename: string | null }[] };
    expect(held.count).toBe(gone.length);
    expect(held.items).toHaveLength(LISTED);
    expect(held.items.map((i) => i.path)).toEqual(gone.slice(0, LISTED));
    for (const i of held.items) expect(i).toEqual({ path: i.path, document_id: made.get(i.path)!.id, filename: i.path });
    // Held: nothing removed.
    expect((await client.documents(project, source.id)).size).toBe(names.length);
  }, 8 * MINUTE);
});
