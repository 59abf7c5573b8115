/**
 * The `s3` kind against Ceph's RGW (test/helpers/rgw.ts): a listing longer than one ListObjectsV2 page (1000 keys)
 * read to its end, keys with spaces, unicode and percent signs, an object the source's keys may not read (its
 * own ACL: another user put it in the bucket) failing alone while the others go on, and a bucket that does not exist
 * failing the pass, and a pass cut off midway continued after the last key it recorded; a prefix's source is the
 * objects under it alone. One RGW and one daemon for
 * the file. (The server stopped, mid-pass, and keys that stop working:
 * test/sources/source-faults.test.ts.)
 */
import { CreateBucketCommand, DeleteObjectCommand, PutBucketAclCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, removeDir, startDaemon, type Daemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { faultProxy } from '../helpers/fault-proxy.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { SourceClient } from '../helpers/sources.js';

const MINUTE = 60_000;
const SKIP = rgwUnavailable();

describe.skipIf(SKIP !== null)(`s3 sources against RGW${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let rgw: Rgw;
  let d: Daemon;
  let client: SourceClient;
  const owner = { id: 'S3SOURCEOWNER0000001', secret: 's3-source-owner-secret-00000000000000000' };
  const other = { id: 'S3SOURCEOTHER0000001', secret: 's3-source-other-secret-00000000000000000' };
  const s3 = (keys: { id: string; secret: string }) =>
    new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: keys.id, secretAccessKey: keys.secret }, requestChecksumCalculation: 'WHEN_REQUIRED' });
  const put = (c: S3Client, bucket: string, key: string, body: string) => c.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const body = (bucket: string, prefix = '') => ({ url: `s3://${bucket}/${prefix}`, options: { endpoint: rgw.endpoint, region: rgw.region, access_key_id: owner.id, secret_access_key: owner.secret } });

  beforeAll(async () => {
    rgw = await startRgw();
    await rgw.admin('user', 'create', '--uid=s3owner', '--display-name=owner', `--access-key=${owner.id}`, `--secret-key=${owner.secret}`);
    await rgw.admin('user', 'create', '--uid=s3other', '--display-name=other', `--access-key=${other.id}`, `--secret-key=${other.secret}`);
    d = await startDaemon({ args: ['--sources-allow-private', '--sources-min-interval', '1'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 3 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await rgw?.stop();
  });

  it('reads a listing of more than one page to its end, and keys with spaces, unicode and percent signs', async () => {
    const c = s3(owner);
    await c.send(new CreateBucketCommand({ Bucket: 'paged' }));
    // 1,050 keys (two pages of at most 1000); only the few the include glob names become documents.
    const names = Array.from({ length: 1050 }, (_, i) => `docs/filler-${String(i).padStart(4, '0')}.bin`);
    for (let i = 0; i < names.length; i += 50) await Promise.all(names.slice(i, i + 50).map((k) => put(c, 'paged', k, 'x')));
    const odd = { 'docs/a note with spaces.txt': 'Spaces in the name, about avocets.', 'docs/zz-café ünïcode.txt': 'Unicode in the name, about egrets.', 'docs/zz-100% done+plus.txt': 'A percent sign in the name, about ibises.' };
    for (const [k, v] of Object.entries(odd)) await put(c, 'paged', k, v);
    const project = await client.project('paged bucket');
    const source = await client.add(project, { ...body('paged', 'docs/'), options: { ...body('paged').options, include: ['*.txt'] } });
    const first = await client.passAfter(project, source.id, 0, 3 * MINUTE);
    expect(first.status, JSON.stringify(first)).toBe('active');
    expect(first.last_result).toMatchObject({ listed: 3, added: 3, failed: 0 });
    expect([...(await client.settled(project, source.id, 3)).keys()].sort()).toEqual(Object.keys(odd).map((k) => k.slice('docs/'.length)).sort());
    expect(await client.found(project, 'ibises')).toEqual(['zz-100% done+plus.txt']);
    // Every key is listed again; the one after the first page's end, deleted, is gone (the rest unchanged).
    await c.send(new DeleteObjectCommand({ Bucket: 'paged', Key: 'docs/zz-café ünïcode.txt' }));
    const again = await client.sync(project, source.id, { timeoutMs: 3 * MINUTE });
    expect(again.last_result).toMatchObject({ listed: 2, unchanged: 2, deleted: 1 });
    expect([...(await client.documents(project, source.id)).keys()].sort()).toEqual(['a note with spaces.txt', 'zz-100% done+plus.txt']);
  }, 6 * MINUTE);

  it("passes over an object the source's keys may not read, takes the others, and deletes nothing", async () => {
    const c = s3(owner);
    await c.send(new CreateBucketCommand({ Bucket: 'shared-bucket' }));
    await c.send(new PutBucketAclCommand({ Bucket: 'shared-bucket', GrantFullControl: 'id=s3owner', GrantWrite: 'id=s3other' }));
    await put(c, 'shared-bucket', 'open.txt', 'An open note about plovers.');
    await put(c, 'shared-bucket', 'zeta.txt', 'A note listed after it, about turnstones.');
    // Put by another user with its default (private) ACL: listed to the bucket's owner, but not readable by them.
    await put(s3(other), 'shared-bucket', 'other.txt', 'A note of another user, about dunlins.');
    const project = await client.project('an object refused');
    const source = await client.add(project, body('shared-bucket'));
    const first = await client.passAfter(project, source.id, 0);
    expect(first.status, JSON.stringify(first)).toBe('active');
    expect(first.last_result).toMatchObject({ listed: 3, added: 2, failed: 1 });
    expect(first.item_errors).toEqual({ count: 1, items: [expect.objectContaining({ path: 'other.txt', error: expect.stringMatching(/AccessDenied/) })] });
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['open.txt', 'zeta.txt']);
    // Still refused on the next pass: nothing else changes, nothing is removed.
    const again = await client.sync(project, source.id);
    expect(again.last_result).toMatchObject({ unchanged: 2, failed: 1, deleted: 0 });
    expect((await client.documents(project, source.id)).size).toBe(2);
  }, 3 * MINUTE);

  /** A new bucket of 20 notes of 2 kB, and a relay to RGW whose endpoint a source of it uses (its `body`). */
  async function notesBehindRelay(bucket: string) {
    const c = s3(owner);
    await c.send(new CreateBucketCommand({ Bucket: bucket }));
    const keys = Array.from({ length: 20 }, (_, i) => `note-${String(i).padStart(2, '0')}.txt`);
    await Promise.all(keys.map((k, i) => put(c, bucket, k, `Note ${i} of twenty, about knots and sanderlings. `.repeat(40))));
    const proxy = await faultProxy(Number(new URL(rgw.endpoint).port));
    // The listing (one page) and a few objects come through, then the relay holds an answer midway.
    proxy.holdAfter(16_000);
    return { keys, proxy, body: { ...body(bucket), options: { ...body(bucket).options, endpoint: `http://127.0.0.1:${proxy.port}` } } };
  }

  it('continues a pass cut off midway after the last key it recorded, not from the first key', async () => {
    const { keys, proxy, body: relayed } = await notesBehindRelay('resumed');
    try {
      const project = await client.project('a pass cut off');
      const source = await client.add(project, relayed);
      await waitFor(() => proxy.holding(), MINUTE, 'the pass held midway');
      await proxy.refuse();
      const cut = await client.passAfter(project, source.id, 0, 2 * MINUTE);
      expect(cut.status, JSON.stringify(cut)).toBe('error');
      const made = (await client.documents(project, source.id)).size;
      expect(made, 'documents made before the cut').toBeGreaterThan(0);
      expect(made).toBeLessThan(keys.length);
      // Back: the next pass lists only the keys after the last one recorded (StartAfter), each new to it; from the
      // first key, it would list the ones made again (unchanged).
      await proxy.accept();
      const resumed = await client.sync(project, source.id, { timeoutMs: 2 * MINUTE });
      expect(resumed.status, JSON.stringify(resumed)).toBe('active');
      expect(resumed.last_result).toMatchObject({ listed: keys.length - made, added: keys.length - made, unchanged: 0, deleted: 0, failed: 0 });
      expect([...(await client.settled(project, source.id, keys.length)).keys()].sort()).toEqual(keys);
      // The pass after it is a new one, from the first key.
      expect((await client.sync(project, source.id)).last_result).toMatchObject({ listed: keys.length, unchanged: keys.length, added: 0, deleted: 0 });
    } finally {
      await proxy.close();
    }
  }, 5 * MINUTE);

  it('continues a pass the daemon stopped midway after the last key it recorded, once it runs again', async () => {
    const { keys, proxy, body: relayed } = await notesBehindRelay('stopped');
    // A held answer ends after 2 s: the stopping daemon's pass then ends at once, as stopped (not failed).
    const args = ['--sources-allow-private', '--sources-min-interval', '1', '--source-timeout', '2'];
    let own = await startDaemon({ args });
    try {
      const key = (await addUser(own)).apiKey;
      const first = new SourceClient(own, key);
      const project = await first.project('a pass the daemon stopped');
      const source = await first.add(project, relayed);
      await waitFor(() => proxy.holding(), MINUTE, 'the pass held midway');
      expect(await own.stop()).toBe(0);
      expect(own.stdout()).toMatch(/source pass stopped before the end/);
      proxy.release();
      const restarted = Date.now();
      own = await startDaemon({ dataDir: own.dataDir, args });
      const again = new SourceClient(own, key);
      // Due at once: the pass goes on from the key after the last one recorded, so every key it lists is new to it
      // (some were made before the stop); from the first key, those would be listed again, unchanged.
      const resumed = await again.passAfter(project, source.id, restarted, 2 * MINUTE);
      expect(resumed.status, JSON.stringify(resumed)).toBe('active');
      const { listed, added, unchanged } = resumed.last_result!;
      expect({ added, unchanged, deleted: resumed.last_result!.deleted }).toEqual({ added: listed, unchanged: 0, deleted: 0 });
      expect(listed, 'keys made before the stop are not listed again').toBeLessThan(keys.length);
      expect([...(await again.settled(project, source.id, keys.length)).keys()].sort()).toEqual(keys);
    } finally {
      await own.stop();
      removeDir(own.dataDir);
      await proxy.close();
    }
  }, 5 * MINUTE);

  it('fails the pass of a bucket that does not exist, saying so, and tries it again', async () => {
    const project = await client.project('a missing bucket');
    const source = await client.add(project, body('never-made'));
    const failed = await client.passAfter(project, source.id, 0);
    expect(failed).toMatchObject({ status: 'error', error: expect.stringMatching(/there is no bucket never-made at this endpoint/) });
    // Tried again after 30 s (docs/sources.md "Errors"), not at its hourly schedule.
    expect(Date.parse(failed.next_sync as string) - Date.now()).toBeLessThanOrEqual(30_000);
    expect(await client.allDocuments(project)).toEqual([]);
  });

  // An s3 source of `s3://bucket/prefix/` is the objects under that prefix (docs/sources.md, Kinds): objects beside it
  // in the bucket (another prefix, or a key that merely begins with the same letters) are not its documents, and
  // their coming and going changes nothing of it.
  it('takes only the objects under its prefix', async () => {
    const c = s3(owner);
    await c.send(new CreateBucketCommand({ Bucket: 'prefixed' }));
    await put(c, 'prefixed', 'docs/a.txt', 'Under the prefix, about oystercatchers.');
    await put(c, 'prefixed', 'docs/sub/b.txt', 'Deeper under the prefix, about lapwings.');
    await put(c, 'prefixed', 'other/c.txt', 'Beside the prefix, about phalaropes.');
    await put(c, 'prefixed', 'docsearch-d.txt', 'A key that begins with the same letters, about stilts.');
    const project = await client.project('prefixed bucket');
    const source = await client.add(project, { ...body('prefixed', 'docs/'), every: '1h' });
    const first = await client.passAfter(project, source.id, 0, 3 * MINUTE);
    expect(first.status, JSON.stringify(first)).toBe('active');
    expect(first.last_result).toMatchObject({ listed: 2, added: 2, failed: 0 });
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['a.txt', 'sub/b.txt']);
    expect(await client.found(project, 'phalaropes')).toEqual([]);
    // An object beside it gone and another come: nothing of the source changes.
    await c.send(new DeleteObjectCommand({ Bucket: 'prefixed', Key: 'other/c.txt' }));
    await put(c, 'prefixed', 'other/e.txt', 'Another one beside the prefix, about avocets.');
    const again = await client.sync(project, source.id, { timeoutMs: 3 * MINUTE });
    expect(again.last_result).toMatchObject({ listed: 2, unchanged: 2, added: 0, deleted: 0 });
    expect([...(await client.documents(project, source.id)).keys()].sort()).toEqual(['a.txt', 'sub/b.txt']);
  }, 6 * MINUTE);
});
