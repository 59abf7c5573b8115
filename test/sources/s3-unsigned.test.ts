/**
 * An `s3` source without keys (docs/sources.md): its requests are unsigned, so it reads a public bucket, and the
 * server's own credentials are never used — a daemon whose environment and shared credentials file hold keys that
 * may read a private bucket still cannot read it through a source given none. One RGW and one daemon for the file.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, removeDir, startDaemon, type Daemon } from '../helpers/daemon.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;
const SKIP = rgwUnavailable();

describe.skipIf(SKIP !== null)(`s3 sources without keys${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-s3-unsigned');
  const owner = { id: 'S3UNSIGNEDOWNER00001', secret: 's3-unsigned-owner-secret-000000000000000' };
  let rgw: Rgw;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    rgw = await startRgw();
    await rgw.admin('user', 'create', '--uid=s3unsigned', '--display-name=owner', `--access-key=${owner.id}`, `--secret-key=${owner.secret}`);
    const c = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: owner.id, secretAccessKey: owner.secret }, requestChecksumCalculation: 'WHEN_REQUIRED' });
    await c.send(new CreateBucketCommand({ Bucket: 'open-bucket', ACL: 'public-read' }));
    await c.send(new PutObjectCommand({ Bucket: 'open-bucket', Key: 'open.txt', Body: 'A public note about oystercatchers.', ACL: 'public-read' }));
    await c.send(new CreateBucketCommand({ Bucket: 'closed-bucket' }));
    await c.send(new PutObjectCommand({ Bucket: 'closed-bucket', Key: 'closed.txt', Body: 'A private note about sanderlings.' }));
    // The server's own credentials, every way the SDK would find them: the environment and a shared credentials file.
    const credentials = join(dirs.make('aws'), 'credentials');
    writeFileSync(credentials, `[default]\naws_access_key_id = ${owner.id}\naws_secret_access_key = ${owner.secret}\n`);
    d = await startDaemon({
      args: ['--sources-allow-private', '--sources-min-interval', '1'],
      env: { AWS_ACCESS_KEY_ID: owner.id, AWS_SECRET_ACCESS_KEY: owner.secret, AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_ENDPOINT_URL: rgw.endpoint, AWS_REGION: rgw.region },
    });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 6 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await rgw?.stop();
    dirs.removeAll();
  });

  const body = (bucket: string) => ({ url: `s3://${bucket}/`, options: { endpoint: rgw.endpoint, region: rgw.region } });

  it('reads a public bucket with unsigned requests', async () => {
    const project = await client.project('public bucket');
    const source = await client.add(project, body('open-bucket'));
    const s = await client.passAfter(project, source.id, 0);
    expect(s.status, JSON.stringify(s)).toBe('active');
    expect([...(await client.settled(project, source.id, 1)).keys()]).toEqual(['open.txt']);
  });

  it("never uses the server's own credentials: a private bucket stays closed to it", async () => {
    const project = await client.project('private bucket');
    const source = await client.add(project, body('closed-bucket'));
    const s = await client.passAfter(project, source.id, 0);
    expect(s.status, JSON.stringify(s)).toBe('error');
    expect(s.error).toMatch(/^the bucket closed-bucket refused the credentials \(AccessDenied\)/);
    expect(await client.allDocuments(project)).toEqual([]);
  });
});
