/**
 * An S3 source of `s3://bucket/prefix/` is the objects under that prefix (docs/sources.md, Kinds): objects beside it
 * in the bucket — under another prefix, or whose key merely begins with the same letters — are not its documents,
 * and their coming and going changes nothing of it.
 */
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, removeDir, startDaemon, type Daemon } from '../helpers/daemon.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { SourceClient } from '../helpers/sources.js';

const MINUTE = 60_000;
const SKIP = rgwUnavailable();

describe.skipIf(SKIP !== null)(`an s3 source's prefix${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let rgw: Rgw;
  let d: Daemon;
  let client: SourceClient;
  const keys = { id: 'S3PREFIXOWNER0000001', secret: 's3-prefix-owner-secret-00000000000000000' };

  beforeAll(async () => {
    rgw = await startRgw();
    await rgw.admin('user', 'create', '--uid=s3prefix', '--display-name=prefix', `--access-key=${keys.id}`, `--secret-key=${keys.secret}`);
    d = await startDaemon({ args: ['--sources-allow-private', '--sources-min-interval', '1'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 3 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await rgw?.stop();
  });

  it('takes only the objects under its prefix', async () => {
    const c = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: keys.id, secretAccessKey: keys.secret }, requestChecksumCalculation: 'WHEN_REQUIRED' });
    const put = (key: string, body: string) => c.send(new PutObjectCommand({ Bucket: 'prefixed', Key: key, Body: body }));
    await c.send(new CreateBucketCommand({ Bucket: 'prefixed' }));
    await put('docs/a.txt', 'Under the prefix, about oystercatchers.');
    await put('docs/sub/b.txt', 'Deeper under the prefix, about lapwings.');
    await put('other/c.txt', 'Beside the prefix, about phalaropes.');
    await put('docsearch-d.txt', 'A key that begins with the same letters, about stilts.');
    const project = await client.project('prefixed bucket');
    const source = await client.add(project, { url: 's3://prefixed/docs/', every: '1h', options: { endpoint: rgw.endpoint, region: rgw.region, access_key_id: keys.id, secret_access_key: keys.secret } });
    const first = await client.passAfter(project, source.id, 0, 3 * MINUTE);
    expect(first.status, JSON.stringify(first)).toBe('active');
    expect(first.last_result).toMatchObject({ listed: 2, added: 2, failed: 0 });
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['a.txt', 'sub/b.txt']);
    expect(await client.found(project, 'phalaropes')).toEqual([]);
    // An object beside it gone and another come: nothing of the source changes.
    await c.send(new DeleteObjectCommand({ Bucket: 'prefixed', Key: 'other/c.txt' }));
    await put('other/e.txt', 'Another one beside the prefix, about avocets.');
    const again = await client.sync(project, source.id, { timeoutMs: 3 * MINUTE });
    expect(again.last_result).toMatchObject({ listed: 2, unchanged: 2, added: 0, deleted: 0 });
    expect([...(await client.documents(project, source.id)).keys()].sort()).toEqual(['a.txt', 'sub/b.txt']);
  }, 6 * MINUTE);
});
