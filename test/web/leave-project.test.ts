/**
 * Leaving a project shared with you, from its Sharing tab on the web: the form goes on to the projects list, saying
 * you left (it went back to the project's Sharing tab, a "no such project" page, and its message turned up on a later
 * page about "them").
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn } from './library-client.js';

describe('leaving a shared project', () => {
  let d: Daemon;
  daemonForSuite(async (started) => {
    d = started;
  });

  it('goes on to the projects list, saying so, and the project is no longer there', async () => {
    const bob = await addUser(d);
    const carol = await addUser(d);
    const project = await api(d, '/api/v1/projects', { token: bob.apiKey, body: { name: 'Q3 reports' } });
    const id = project.body.id as string;
    const shared = await api(d, `/api/v1/projects/${id}/members`, { token: bob.apiKey, body: { email: carol.email, role: 'owner' } });
    expect(shared.status, JSON.stringify(shared.body)).toBe(201);
    const web = await loggedIn(d, carol);
    await web.get(`/projects/${id}/sharing`);
    const res = await web.submit(`/projects/${id}/members/${shared.body.id}/remove`, { _csrf: web.csrf });
    expect(res.redirectedFrom?.location).toBe('/projects');
    expect(res.status).toBe(200);
    expect(res.text).toContain('You left the project: what you uploaded in it stays.');
    expect(res.text).not.toContain('Q3 reports');
    // The message was shown once: the next page has none.
    expect((await web.get('/projects')).text).not.toContain('You left the project');
    // Bob removing someone else stays on the Sharing tab, as before.
    const dave = await addUser(d);
    const daveShare = await api(d, `/api/v1/projects/${id}/members`, { token: bob.apiKey, body: { email: dave.email, role: 'viewer' } });
    const bobWeb = await loggedIn(d, bob);
    await bobWeb.get(`/projects/${id}/sharing`);
    const removed = await bobWeb.submit(`/projects/${id}/members/${daveShare.body.id}/remove`, { _csrf: bobWeb.csrf });
    expect(removed.redirectedFrom?.location).toBe(`/projects/${id}/sharing`);
    expect(removed.text).toContain('No longer shared with them: what they uploaded stays.');
  });
});
