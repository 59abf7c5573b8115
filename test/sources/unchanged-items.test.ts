/**
 * What a version is, and that an unchanged item costs only its listing entry (docs/sources.md, the kinds' table):
 * a folder's file touched with the same bytes is not indexed again; a WebDAV folder is read one PROPFIND per folder
 * (Depth 1) and an unchanged file is not fetched again (its ETag, weak or strong alike); an unchanged S3 object is not fetched again (its
 * ETag). The requests are counted by an HTTP relay in front of Apache mod_dav and Ceph RGW.
 */
import { PutObjectCommand, S3Client, CreateBucketCommand } from '@aws-sdk/client-s3';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { logS3Requests, type S3RequestLog } from '../helpers/s3-request-log.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;

describe('unchanged items', () => {
  const dirs = tempDirs('docsearch-unchanged');
  const relays: S3RequestLog[] = [];
  let root: string;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-allow-private', '--sources-min-interval', '1'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    for (const r of relays) await r.close();
    dirs.removeAll();
  });

  it('a file touched with the same bytes is not indexed again', async () => {
    const dir = join(root, 'touched');
    mkdirSync(dir);
    writeFileSync(join(dir, 'note.txt'), 'A note about pratincoles.');
    const project = await client.project('touched');
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    await client.passAfter(project, source.id, 0);
    const before = (await client.settled(project, source.id, 1)).get('note.txt')!;
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'note.txt'), later, later);
    const again = await client.sync(project, source.id);
    expect(again.last_result).toMatchObject({ listed: 1, unchanged: 1, changed: 0 });
    expect((await client.documents(project, source.id)).get('note.txt')).toEqual(before);
  });

  const noApache = apacheUnavailable();
  describe.skipIf(noApache !== null)(`WebDAV${noApache ? ` (skipped: ${noApache})` : ''}`, () => {
    let apache: Apache;
    beforeAll(async () => {
      apache = await startApache();
    }, 2 * MINUTE);
    afterAll(async () => {
      await apache?.stop();
    });

    it('one PROPFIND per folder, and no GET for an unchanged file', async () => {
      const base = join(apache.davDir, 'unchanged');
      mkdirSync(join(base, 'sub', 'deeper'), { recursive: true });
      writeFileSync(join(base, 'a.txt'), 'A file about avocets.');
      writeFileSync(join(base, 'sub', 'b.txt'), 'A file about bitterns.');
      writeFileSync(join(base, 'sub', 'deeper', 'c.txt'), 'A file about coots.');
      const relay = await logS3Requests(apache.davUrl);
      relays.push(relay);
      const project = await client.project('webdav unchanged');
      const source = await client.add(project, { kind: 'webdav', url: `${relay.endpoint}/unchanged/`, every: '1h', options: { username: apache.davUser.name, password: apache.davUser.password } });
      await client.passAfter(project, source.id, 0);
      await client.settled(project, source.id, 3);
      const propfinds = () => relay.requests().filter((r) => r.method === 'PROPFIND').map((r) => r.path.replace(/\/$/, ''));
      expect(propfinds().sort()).toEqual(['/unchanged', '/unchanged/sub', '/unchanged/sub/deeper']);
      expect(relay.requests().filter((r) => r.method === 'GET')).toHaveLength(3);
      relay.reset();
      writeFileSync(join(base, 'sub', 'b.txt'), 'A file about bitterns, now about egrets too.');
      const again = await client.sync(project, source.id);
      expect(again.last_result).toMatchObject({ listed: 3, unchanged: 2, changed: 1 });
      expect(propfinds()).toHaveLength(3);
      expect(relay.requests().filter((r) => r.method === 'GET').map((r) => r.path)).toEqual(['/unchanged/sub/b.txt']);
      // Listed within a second of its change, b.txt's ETag was weak (Apache's W/ for a file that young); a second
      // later it is strong, the same version: nothing to fetch.
      await new Promise((r) => setTimeout(r, 1100));
      relay.reset();
      expect((await client.sync(project, source.id)).last_result).toMatchObject({ listed: 3, unchanged: 3 });
      expect(relay.requests().filter((r) => r.method === 'GET')).toEqual([]);
    });
  });

  const noRgw = rgwUnavailable();
  describe.skipIf(noRgw !== null)(`S3${noRgw ? ` (skipped: ${noRgw})` : ''}`, () => {
    let rgw: Rgw;
    beforeAll(async () => {
      rgw = await startRgw();
    }, 6 * MINUTE);
    afterAll(async () => {
      await rgw?.stop();
    });

    it('no GET for an unchanged object', async () => {
      const s3 = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED' });
      await s3.send(new CreateBucketCommand({ Bucket: 'unchanged-bucket' }));
      for (const [key, text] of [['a.txt', 'An object about avocets.'], ['b.txt', 'An object about bitterns.']]) await s3.send(new PutObjectCommand({ Bucket: 'unchanged-bucket', Key: key, Body: text }));
      const relay = await logS3Requests(rgw.endpoint);
      relays.push(relay);
      const project = await client.project('s3 unchanged');
      const source = await client.add(project, { url: 's3://unchanged-bucket/', every: '1h', options: { endpoint: relay.endpoint, region: rgw.region, access_key_id: rgw.accessKeyId, secret_access_key: rgw.secretAccessKey } });
      await client.passAfter(project, source.id, 0);
      await client.settled(project, source.id, 2);
      const objectGets = () => relay.requests().filter((r) => r.method === 'GET' && r.path !== '/unchanged-bucket' && r.path !== '/unchanged-bucket/').map((r) => r.path);
      expect(objectGets().sort()).toEqual(['/unchanged-bucket/a.txt', '/unchanged-bucket/b.txt']);
      relay.reset();
      await s3.send(new PutObjectCommand({ Bucket: 'unchanged-bucket', Key: 'b.txt', Body: 'An object about bitterns and egrets.' }));
      const again = await client.sync(project, source.id);
      expect(again.last_result).toMatchObject({ listed: 2, unchanged: 1, changed: 1 });
      expect(objectGets()).toEqual(['/unchanged-bucket/b.txt']);
    });
  });
});
