/**
 * Two files that swap names on a daemon with `--trash-days 0` (docs/sources.md "A pass", step 4): with no trash to
 * bring a document back from, the file listed first takes the other's document (its id, its index), and the one
 * listed second is indexed anew as a new document; both texts stay searchable under their new names.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

describe('two files swapping names without a trash', () => {
  const dirs = tempDirs('docsearch-swap-no-trash');
  let root: string;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1', '--trash-days', '0'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  it('keeps the document of the one listed first, and indexes the one listed second anew', async () => {
    const dir = join(root, 'swapped');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), 'The first text, about whimbrels.');
    writeFileSync(join(dir, 'b.txt'), 'The second text, about godwits.');
    const project = await client.project('swapped');
    const source = (await client.add(project, { url: `file://${dir}`, every: '1h' })).id;
    await client.passAfter(project, source, 0);
    const before = await client.settled(project, source, 2);
    renameSync(join(dir, 'a.txt'), join(dir, 'tmp'));
    renameSync(join(dir, 'b.txt'), join(dir, 'a.txt'));
    renameSync(join(dir, 'tmp'), join(dir, 'b.txt'));
    expect((await client.sync(project, source)).last_result).toMatchObject({ failed: 0 });
    const after = await client.settled(project, source, 2);
    // a.txt, listed first, now holds b's bytes: b's document followed it. b.txt (a's bytes) is a new document.
    expect(after.get('a.txt')).toMatchObject({ id: before.get('b.txt')!.id, sha256: before.get('b.txt')!.sha256 });
    expect(after.get('b.txt')!.sha256).toBe(before.get('a.txt')!.sha256);
    expect([before.get('a.txt')!.id, before.get('b.txt')!.id]).not.toContain(after.get('b.txt')!.id);
    expect(await client.found(project, 'whimbrels')).toEqual(['b.txt']);
    expect(await client.found(project, 'godwits')).toEqual(['a.txt']);
  }, 180_000);
});
