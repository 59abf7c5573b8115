/**
 * A source's item brings its own name (a web page's last path segment, an S3 key's, a mail's subject): one longer than
 * a rename takes is fitted as an upload's is (core/name-limits.ts fitFilename), so the document can be renamed to
 * its own name. A web source here, on a small real site.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILENAME_CHARS } from '../../src/core/name-limits.js';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';

const LONG = `${'a'.repeat(300)}.txt`;
/** A page whose name a person reads with accents, a space and an emoji; its link and address are percent-encoded. */
const NAMED = 'Café notes 🛶.txt';

describe("a source item's long name", () => {
  let d: Daemon;
  let user: TestUser;
  let server: Server;
  let site = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url!, 'http://x').pathname;
      if (path === '/docs/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><a href="${LONG}">notes</a> <a href="${encodeURIComponent(NAMED)}">café</a> <a href="bad%E9.txt">latin-1</a></body></html>`);
      if (path === `/docs/${encodeURIComponent(NAMED)}`) return void res.writeHead(200, { 'content-type': 'text/plain' }).end('Notes kept at the café by the river.');
      if (path === '/docs/bad%E9.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('A name that is no UTF-8 once decoded.');
      if (path === `/docs/${LONG}`) return void res.writeHead(200, { 'content-type': 'text/plain' }).end('Field notes about curlews.');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    site = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    d = await startDaemon({ args: ['--sources-allow-private'] });
    user = await addUser(d);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    server?.close();
  });

  it(`is fitted to ${MAX_FILENAME_CHARS} characters, its extension kept, a name a rename takes`, async () => {
    const client = new SourceClient(d, user.apiKey);
    const project = await client.project('long names');
    const source = await client.add(project, { kind: 'web', url: `${site}/docs/`, options: { delay_ms: 0 } });
    const docs = await client.settled(project, source.id, 4);
    const doc = [...docs.values()].find((x) => x.filename.startsWith('aaa'));
    expect(doc, JSON.stringify([...docs.values()].map((x) => x.filename))).toBeDefined();
    expect(doc!.filename).toBe(`${'a'.repeat(MAX_FILENAME_CHARS - 4)}.txt`);
    const renamed = await api(d, `/api/v1/documents/${doc!.id}`, { method: 'PATCH', token: user.apiKey, body: { filename: doc!.filename } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    // Names are read as a person wrote them, not as their address encodes them; one that decodes to no text stays as sent.
    const names = [...docs.values()].map((x) => x.filename);
    expect(names).toContain(NAMED);
    expect(names).toContain('bad%E9.txt');
  }, 120_000);
});
