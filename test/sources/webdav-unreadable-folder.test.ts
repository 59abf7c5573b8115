/**
 * A WebDAV subfolder the server will no longer list (its permissions changed: Apache mod_dav answers its PROPFIND
 * with an error) is a listing that cannot be read to its end (docs/sources.md, "A pass", step 1): the pass fails and
 * nothing is decided from it. Taken for an empty folder, its documents would be deleted — fewer than the deletion
 * guard's thresholds, so nothing would hold them.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apacheUnavailable } from '../helpers/apache.js';
import { apacheSources } from '../helpers/apache-sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const SKIP = apacheUnavailable();

describe.skipIf(SKIP !== null)(`a WebDAV subfolder that cannot be listed${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-webdav-unreadable');
  const world = apacheSources();
  afterAll(() => dirs.removeAll());

  it('fails the pass and keeps the documents of the folder it could not list', async () => {
    const { apache, client } = world;
    const top = join(apache.davDir, 'unreadable');
    const sub = join(top, 'sub');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(top, 'a.txt'), 'The top note, about curlews.');
    writeFileSync(join(sub, 'b.txt'), 'The first note below, about dunlins.');
    writeFileSync(join(sub, 'c.txt'), 'The second note below, about sanderlings.');
    const project = await client.project('unreadable');
    const body = { kind: 'webdav', url: `${apache.davUrl}/unreadable/`, every: '1h', options: { username: apache.davUser.name, password: apache.davUser.password } };
    const source = (await client.add(project, body)).id;
    await client.passAfter(project, source, 0);
    const before = await client.settled(project, source, 3);
    chmodSync(sub, 0o000);
    try {
      const failed = await client.sync(project, source);
      expect(failed.status).toBe('error');
      // Not the credentials, which listed the top folder: that folder's permissions, named.
      expect(failed.error).toMatch(/would not list .*\(\/sub\/?\) \(HTTP 403: the folder's permissions\)/);
      const kept = await client.documents(project, source);
      expect([...kept.keys()].sort()).toEqual(['a.txt', 'sub/b.txt', 'sub/c.txt']);
      expect(kept.get('sub/b.txt')!.id).toBe(before.get('sub/b.txt')!.id);
    } finally {
      chmodSync(sub, 0o755);
    }
    // Readable again: the next pass finds every document as it was.
    const again = await client.sync(project, source);
    expect(again.status).toBe('active');
    expect(again.last_result).toMatchObject({ listed: 3, unchanged: 3, deleted: 0 });
  }, 180_000);
});
