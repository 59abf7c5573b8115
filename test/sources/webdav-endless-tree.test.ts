/**
 * A WebDAV server listing an endlessly wide tree (every folder holding 5,000 more, each answer well under the
 * per-folder bound): a pass stops after MAX_PASS_ENTRIES entries (docs/sources.md, webdav), fails saying so, and
 * removes nothing it indexed before — its listing did not finish, so a file it no longer names is not gone. The
 * daemon's memory and the pass's time stay bounded. Real HTTP against a server written for it, through a daemon.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PASS_ENTRIES } from '../../src/sources/kinds/webdav.js';
import { addUser, type Daemon, REPO, removeDir, startDaemon } from '../helpers/daemon.js';
import { rssSampler } from '../helpers/rss-sampler.js';
import { SourceClient } from '../helpers/sources.js';

const WIDTH = 5_000;
const FILES: Record<string, string> = { 'alpha.txt': 'An alpha note about aardvarks.\n', 'beta.txt': 'A beta note about badgers.\n' };

const entry = (href: string, folder: boolean, etag = '') =>
  `<d:response><d:href>${href}</d:href><d:propstat><d:prop>${folder ? '<d:resourcetype><d:collection/></d:resourcetype>' : `<d:resourcetype/><d:getetag>"${etag}"</d:getetag><d:getcontentlength>10</d:getcontentlength>`}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`;

describe('a WebDAV server listing an endlessly wide tree', () => {
  let server: Server;
  let base: string;
  let endless = false;
  let folders = 0;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      if (req.method === 'GET') {
        const body = FILES[path.replace(/^\/dav\//, '')];
        res.writeHead(body ? 200 : 404).end(body);
        return;
      }
      const self = path.replace(/\/*$/, '/');
      const parts = [entry(self, true)];
      if (self === '/dav/') {
        // The endless server no longer names beta: a finished listing would remove its document.
        parts.push(entry('/dav/alpha.txt', false, 'a1'));
        if (!endless) parts.push(entry('/dav/beta.txt', false, 'b1'));
      }
      if (endless) {
        folders++;
        for (let i = 0; i < WIDTH; i++) parts.push(entry(`${self}f${i}/`, true));
      }
      res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8' }).end(`<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">${parts.join('')}</d:multistatus>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    d = await startDaemon({ args: ['--sources-allow-private', '--source-timeout', '10'] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    server?.close();
  });

  it('docs/sources.md gives the bound', () => {
    expect(readFileSync(join(REPO, 'docs/sources.md'), 'utf8')).toContain(`A pass lists at most ${MAX_PASS_ENTRIES.toLocaleString('en')} entries (files and folders)`);
  });

  it('the pass stops at the bound, saying so, and removes nothing', async () => {
    const project = await client.project('endless tree');
    const source = await client.add(project, { kind: 'webdav', url: `${base}/dav/` });
    const first = await client.passAfter(project, source.id, 0);
    expect(first.error, JSON.stringify(first)).toBeUndefined();
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['alpha.txt', 'beta.txt']);

    endless = true;
    const memory = rssSampler(d.proc.pid!);
    const started = performance.now();
    const failed = await client.sync(project, source.id, { timeoutMs: 5 * 60_000 });
    const seconds = (performance.now() - started) / 1000;
    const { before, peak } = memory.stop();
    console.log(`endless WebDAV tree: ${folders} folders asked for, pass ${seconds.toFixed(1)} s, daemon RSS ${before} MiB before, ${peak} MiB at peak`);
    expect(failed.status).toBe('error');
    expect(failed.error).toBe(`the WebDAV folder ${base}/dav/ lists more than ${MAX_PASS_ENTRIES.toLocaleString('en')} entries (files and folders) in one pass: the pass stops there, and nothing is removed for it`);
    expect(folders).toBeLessThanOrEqual(Math.ceil(MAX_PASS_ENTRIES / WIDTH) + 1);
    expect(peak - before).toBeLessThan(300);
    expect([...(await client.documents(project, source.id)).keys()].sort()).toEqual(['alpha.txt', 'beta.txt']);
    expect(await client.found(project, 'badgers')).toEqual(['beta.txt']);
  }, 6 * 60_000);
});
