/**
 * A folder source never reads a docsearch data directory, another daemon's on the same machine included (docs/sources.md,
 * folder): one left by a real second daemon under the first one's `--source-roots`. A source that is or lies in it is
 * refused when added; one that holds it fails its pass on reaching it, reading nothing in it, and deletes nothing it
 * indexed before; a symlink to its secrets key is passed over; one that comes to hold it later fails its next pass.
 */
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;

describe("a folder source on another docsearch server's data directory", () => {
  const dirs = tempDirs('docsearch-other-data');
  let root: string;
  let other: string;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    root = dirs.make('root');
    other = join(root, 'other-library');
    mkdirSync(other);
    // The other server ran once with an upload, and stopped: what it left is what a source would find.
    const second = await startDaemon({ dataDir: other });
    await second.stop();
    expect(existsSync(join(other, 'secrets.key')), 'the other server left its secrets key').toBe(true);
    expect(existsSync(join(other, 'daemon.lock')), 'and its lock file').toBe(true);
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 3 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  const add = async (name: string, path: string) => {
    const project = await client.project(name);
    return { project, res: await api(d, `/api/v1/projects/${project}/sources`, { token: client.token, body: { url: `file://${path}` } }) };
  };

  it('the data directory itself, or a folder in it: refused when added, saying why', async () => {
    const itself = await add('itself', other);
    expect(itself.res.status).toBe(400);
    expect(itself.res.body.error.message).toBe(`body.url: ${other} is a docsearch data directory: its originals, database and secrets key are no source's to read`);
    // What `docsearch backup` leaves marks one too (docs/sources.md names the three).
    const backedUp = join(root, 'backed-up');
    mkdirSync(backedUp);
    writeFileSync(join(backedUp, 'backup.lock'), '');
    const backup = await add('backed up', backedUp);
    expect(backup.res.status).toBe(400);
    expect(backup.res.body.error.message).toMatch(/backed-up is a docsearch data directory/);
    rmSync(backedUp, { recursive: true });
    const inside = await add('inside', join(other, 'files'));
    expect(inside.res.status).toBe(400);
    expect(inside.res.body.error.message).toBe(`body.url: ${join(other, 'files')} lies in a docsearch data directory (${other}): its originals, database and secrets key are no source's to read`);
  });

  it('a folder holding it: the pass fails on reaching it, nothing in it is read', async () => {
    writeFileSync(join(root, 'aardvark.txt'), 'An aardvark note beside the other library.\n');
    // A symlink to the other server's key, listed before the library is reached: passed over.
    symlinkSync(join(other, 'secrets.key'), join(root, 'a-key.txt'));
    const { project, res } = await add('holding', root);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const failed = await client.passAfter(project, res.body.id, 0);
    expect(failed.status).toBe('error');
    expect(failed.error).toBe(`${root} holds a docsearch data directory (${other}): its originals, database and secrets key are no source's to read`);
    const names = (await client.allDocuments(project)).map((doc) => doc.filename);
    expect(names.filter((n) => n !== 'aardvark.txt')).toEqual([]);
  });

  it('a folder that comes to hold one fails its next pass and deletes nothing', async () => {
    const docs = join(root, 'zz-docs');
    mkdirSync(docs);
    writeFileSync(join(docs, 'kept.txt'), 'A kept note.\n');
    const { project, res } = await add('later', docs);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const first = await client.passAfter(project, res.body.id, 0);
    expect(first.error, JSON.stringify(first)).toBeUndefined();
    await client.settled(project, res.body.id, 1);
    renameSync(other, join(docs, 'moved-library'));
    try {
      const failed = await client.sync(project, res.body.id);
      expect(failed.status).toBe('error');
      expect(failed.error).toMatch(/holds a docsearch data directory .*moved-library/);
      expect([...(await client.documents(project, res.body.id)).keys()]).toEqual(['kept.txt']);
    } finally {
      renameSync(join(docs, 'moved-library'), other);
    }
  });
});
