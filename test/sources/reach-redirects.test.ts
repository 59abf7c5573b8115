/**
 * A redirect is checked as the first address is (docs/sources.md "Where sources may connect"): a WebDAV folder that
 * answers with a redirect to the cloud metadata address (link-local: never reached) fails the pass saying so, even
 * where private addresses are allowed; an S3 endpoint's redirect is not followed at all (the SDK follows none), and
 * the pass says what it got. Nothing is indexed. Real HTTP against a server that redirects every request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';

describe('a source redirected to a link-local address', () => {
  let server: Server;
  let base: string;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    server = createServer((req, res) => res.writeHead(307, { location: `http://169.254.169.254${req.url}` }).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    d = await startDaemon({ args: ['--sources-allow-private', '--source-timeout', '5'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    server?.close();
  });

  it.each([
    ['WebDAV', () => ({ kind: 'webdav', url: `${base}/remote.php/dav/files/alice/Docs/` }), /could not be read: .*169\.254\.169\.254 is a link-local address: sources may not connect to it$/],
    [
      'S3',
      () => ({ url: 's3://redirected-bucket/', options: { endpoint: base, access_key_id: 'REDIRECTEDKEY0000001', secret_access_key: 'redirected-secret-0000000000000000000000' } }),
      /^the bucket redirected-bucket could not be listed: .*\(HTTP 307\)$/,
    ],
  ])('%s: the pass fails saying why, nothing is indexed', async (kind, body, why) => {
    const project = await client.project(`redirected ${kind}`);
    const source = await client.add(project, body());
    const failed = await client.passAfter(project, source.id, 0);
    expect(failed.status, JSON.stringify(failed)).toBe('error');
    expect(failed.error).toMatch(why);
    expect(await client.allDocuments(project)).toEqual([]);
  });
});
