/**
 * The Sources tab tells a source whose pass is due from one that is up to date. The daemon runs two passes at once;
 * here both are held by web-site sources whose server accepts and never answers, so a folder source added next is
 * due and cannot start: its card says so, where it said "Up to date" before any pass had read the folder. Once the
 * silent server lets go, the folder's pass runs and the card says "Up to date". Through the built daemon, real HTTP
 * and the web page.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { loggedIn } from '../server/web-client.js';

describe('a source whose pass is due, on the Sources tab', () => {
  const dirs = tempDirs('docsearch-due-source');
  let server: Server;
  const sockets = new Set<Socket>();
  let d: Daemon;
  let owner: TestUser;
  let client: SourceClient;
  let root: string;

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.resume(); // reads the request, answers nothing
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-allow-private', '--source-timeout', '600'] });
    owner = await addUser(d);
    client = new SourceClient(d, owner.apiKey);
  }, 120_000);
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server?.close(resolve));
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
    dirs.removeAll();
  });

  it('says "Pass due" while no pass slot is free, then "Up to date" once its pass has run', async () => {
    const project = await client.project('due');
    const port = (server.address() as { port: number }).port;
    const silent = [await client.add(project, { kind: 'web', url: `http://127.0.0.1:${port}/a/` }), await client.add(project, { kind: 'web', url: `http://127.0.0.1:${port}/b/` })];
    await waitFor(async () => (await Promise.all(silent.map((s) => client.get(project, s.id)))).every((s) => s.status === 'syncing'), 30_000, 'both silent sources to be syncing');

    const folder = join(root, 'docs');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'note.txt'), 'A note the folder source reads once a pass slot is free.\n');
    const waiting = await client.add(project, { url: `file://${folder}` });
    const web = await loggedIn(d, owner);
    const card = async () => {
      const page = await web.get(`/projects/${project}/sources`);
      expect(page.status).toBe(200);
      const m = new RegExp(`<li class="source" data-source-id="${waiting.id}"[\\s\\S]*?</li>`).exec(page.text);
      expect(m, page.text).not.toBeNull();
      return m![0].replace(/\s+/g, ' ');
    };
    const due = await card();
    expect(due).toContain('Pass due');
    expect(due).not.toContain('Up to date');
    expect(due).toContain('Its next pass is due');
    // The API's state is as before: active, with no pass finished.
    expect(await client.get(project, waiting.id)).toMatchObject({ status: 'active', last_sync: null });

    for (const s of sockets) s.destroy(); // the silent passes fail; the folder's runs
    await waitFor(async () => (await client.get(project, waiting.id)).last_sync !== null, 60_000, "the folder source's pass");
    const done = await card();
    expect(done).toContain('Up to date');
    expect(done).not.toContain('Pass due');
  }, 120_000);
});
