/**
 * A source's server that accepts the connection and then says nothing (issue 61: a source never hangs): each remote
 * kind — WebDAV, S3, a web site, Git over HTTP, IMAP — connects through its real client library to a local TCP server
 * that accepts and stays silent, and its pass fails with an error that says so once `--source-timeout` (here 1 s)
 * has gone by in silence. Were there no bound the pass would wait forever and the test would time out. In-process
 * (the kinds as the scheduler calls them): no daemon is needed to hold a socket open.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import type { SourceKind } from '../../src/sources/kind.js';
import { KINDS } from '../../src/sources/kinds/index.js';
import { Reach } from '../../src/sources/reach.js';

describe('a server that accepts and never answers fails the pass after --source-timeout', () => {
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();
  const scratch = mkdtempSync(join(tmpdir(), 'docsearch-silent-'));
  // Loopback is allowed as with --sources-allow-private; one second of silence is the bound.
  const reach = new Reach(true, 1000);
  const abort = new AbortController();

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.resume(); // reads what the client says, and answers nothing
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    abort.abort();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(scratch, { recursive: true, force: true });
  });

  /** A pass's reading of the source: connect, list, and read the listing to its end. */
  async function pass(kind: SourceKind, url: string, options: Record<string, unknown> = {}, secrets: Record<string, string> = {}): Promise<void> {
    const connection = await kind.connect({ url: new URL(url), options, secrets }, { reach, roots: [], hidden: [], scratchDir: join(scratch, kind.name), maxItemBytes: 1 << 20, signal: abort.signal, now: systemClock });
    try {
      const listing = await connection.list({ cursor: null, resumeAfter: null, known: () => undefined, knownPaths: () => [] });
      for await (const item of listing.items) await connection.fetch(item);
    } finally {
      await connection.close();
    }
  }

  const silence = /sent nothing for 1 s \(--source-timeout\)/;

  it('WebDAV', async () => {
    await expect(pass(KINDS.webdav!, `http://127.0.0.1:${port}/remote.php/dav/files/a/`, { username: 'a' }, { password: 'p' })).rejects.toThrow(silence);
  });

  it('a web site', async () => {
    await expect(pass(KINDS.web!, `http://127.0.0.1:${port}/docs/`)).rejects.toThrow(silence);
  });

  it('S3', async () => {
    await expect(pass(KINDS.s3!, 's3://bucket/prefix/', { endpoint: `http://127.0.0.1:${port}`, access_key_id: 'k' }, { secret_access_key: 's' })).rejects.toThrow(silence);
  });

  it('Git over HTTP', async () => {
    await expect(pass(KINDS.git!, `http://127.0.0.1:${port}/repo.git`)).rejects.toThrow(silence);
  });

  it('IMAP', async () => {
    await expect(pass(KINDS.imap!, `imap://127.0.0.1:${port}/INBOX`, { username: 'a' }, { password: 'p' })).rejects.toThrow(silence);
  });
});
