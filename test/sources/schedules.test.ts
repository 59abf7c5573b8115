/**
 * A source's schedule on a daemon with the default settings (docs/sources.md "A pass"): every hour when none is
 * given, and no shorter than --sources-min-interval (60 s by default), on adding and on changing it alike; an interval
 * typed as `1h30m` or `3d` (written back the shortest way), at most 30 days, and the next pass due that long after one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

describe('source schedules under the default settings', () => {
  const dirs = tempDirs('docsearch-schedules');
  let root: string;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root] });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  it('is hourly unless given, and at least a minute', async () => {
    const project = await client.project('schedules');
    const sources = `/api/v1/projects/${project}/sources`;
    const added = await client.add(project, { url: `file://${root}` });
    expect(added.every).toBe('1h');
    const short = await api(d, sources, { token: user.apiKey, body: { url: `file://${root}`, every: '59s' } });
    expect(short.status).toBe(400);
    expect(short.body.error.message).toBe('body.every: at least 1m on this server');
    const edited = await api(d, `${sources}/${added.id}`, { method: 'PATCH', token: user.apiKey, body: { every: '30s' } });
    expect(edited.status).toBe(400);
    expect(edited.body.error.message).toBe('body.every: at least 1m on this server');
    // A PATCH naming nothing to change is the body's error, with details as every field error (docs/api.md).
    const nothing = 'body: nothing to change (every, options, status or labels)';
    const empty = await api(d, `${sources}/${added.id}`, { method: 'PATCH', token: user.apiKey, body: {} });
    expect([empty.status, empty.body.error]).toMatchObject([400, { message: nothing, details: [{ path: 'body', message: nothing }] }]);
    expect((await client.add(project, { url: `file://${root}`, every: '1m' })).every).toBe('1m');
  });

  it('takes intervals typed as 1h30m or 3d, up to 30 days, and runs the next pass that long after one', async () => {
    const project = await client.project('typed schedules');
    const sources = `/api/v1/projects/${project}/sources`;
    const compound = await client.add(project, { url: `file://${root}`, every: '1h30m' });
    expect(compound.every).toBe('1h30m');
    const passed = await client.passAfter(project, compound.id, 0);
    expect(Date.parse(passed.next_sync as string) - Date.parse(passed.last_sync!)).toBeGreaterThanOrEqual(90 * 60_000 - 1000);
    expect(Date.parse(passed.next_sync as string) - Date.parse(passed.last_sync!)).toBeLessThanOrEqual(90 * 60_000 + 1000);
    expect((await client.add(project, { url: `file://${root}`, every: '3d' })).every).toBe('3d');
    expect((await client.add(project, { url: `file://${root}`, every: '90m' })).every).toBe('1h30m');
    expect((await client.add(project, { url: `file://${root}`, every: '30d' })).every).toBe('30d');
    const long = await api(d, sources, { token: user.apiKey, body: { url: `file://${root}`, every: '31d' } });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toBe('body.every: at most 30d');
  });
});
