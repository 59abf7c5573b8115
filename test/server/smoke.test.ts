import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

describe('daemon smoke', () => {
  let d: Daemon;
  daemonForSuite((started) => {
    d = started;
  });

  it('serves health without a credential and projects with an API key', async () => {
    expect((await api(d, '/api/v1/health')).status).toBe(200);
    const u = await addUser(d);
    expect(u.apiKey).toMatch(/^dsk_[0-9A-Za-z]{43}$/);
    const res = await api(d, '/api/v1/projects', { token: u.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.projects.map((p: { name: string }) => p.name)).toEqual(['default']);
  });
});
