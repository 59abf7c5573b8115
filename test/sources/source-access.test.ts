/**
 * Who may see and run a project's sources (docs/sources.md: "A source is managed by whoever may edit its project";
 * server/api/sources/access.ts): its editors and owners. A viewer, who may read the project's documents, gets 403 on
 * every source route (its address and credentials' names are how the project is kept, not what it holds), and
 * someone who may not read the project gets 404, as if it were not there.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

describe('access to a project\'s sources', () => {
  const dirs = tempDirs('docsearch-source-access');
  let root: string;
  let d: Daemon;
  let owner: TestUser;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'] });
    owner = await addUser(d);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  it('lets editors see and run a source; a viewer gets 403 on every source route, a stranger 404', async () => {
    const dir = join(root, 'kept');
    mkdirSync(dir);
    writeFileSync(join(dir, 'note.txt'), 'A note about the access rules of sources.');
    const client = new SourceClient(d, owner.apiKey);
    const project = await client.project('access');
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    await client.passAfter(project, source.id, 0);
    const [viewer, editor, stranger] = [await addUser(d), await addUser(d), await addUser(d)];
    for (const [user, role] of [[viewer, 'viewer'], [editor, 'editor']] as const) {
      expect((await api(d, `/api/v1/projects/${project}/members`, { method: 'POST', token: owner.apiKey, body: { email: user.email, role } })).status).toBe(201);
    }
    const sources = `/api/v1/projects/${project}/sources`;
    const one = `${sources}/${source.id}`;
    const routes: [string, string, unknown?][] = [
      ['GET', sources],
      ['GET', one],
      ['POST', sources, { url: `file://${dir}`, every: '1h' }],
      ['PATCH', one, { every: '2h' }],
      ['POST', `${one}/sync`, {}],
      ['PATCH', one, { status: 'paused' }],
      ['DELETE', one],
    ];
    for (const [method, path, body] of routes) {
      expect((await api(d, path, { method, token: viewer.apiKey, body })).status, `${method} ${path} as a viewer`).toBe(403);
      expect((await api(d, path, { method, token: stranger.apiKey, body })).status, `${method} ${path} as a stranger`).toBe(404);
    }
    // Nothing the viewer asked for happened: the same schedule, active, one source.
    const after = await client.get(project, source.id);
    expect(after).toMatchObject({ status: 'active', every: '1h' });
    expect((await api(d, sources, { token: owner.apiKey })).body.sources).toHaveLength(1);
    // The viewer still reads the project's documents.
    expect((await new SourceClient(d, viewer.apiKey).allDocuments(project)).map((doc) => doc.source_path)).toEqual(['note.txt']);
    // An editor sees and runs it.
    expect((await api(d, one, { token: editor.apiKey })).status).toBe(200);
    expect((await api(d, `${one}/sync`, { method: 'POST', token: editor.apiKey, body: {} })).status).toBeLessThan(300);
  }, 180_000);
});
