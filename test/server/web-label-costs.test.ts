/**
 * What two pages cost, counted on the daemon's own services (test/server/daemon-in-process.ts): the search page's
 * saved-search sidebar asks access about each saved search's Rename and Delete… once for all of them, not twice per
 * search (hundreds of asks at a team's 300 searches); a label's delete confirmation reads that one label with its
 * count, not its project's whole vocabulary (1,500 labels, each counted, to show one number).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { daemonInProcess, type InProcessDaemon, watchCalls } from './daemon-in-process.js';
import { loggedIn } from './web-client.js';

/** Rows the label store answered a call with: a list's, a page's, one label's or none. */
const rowsIn = (answer: unknown): number =>
  Array.isArray(answer) ? answer.length : answer && typeof answer === 'object' && 'labels' in answer ? (answer.labels as unknown[]).length : answer ? 1 : 0;

describe('what the saved-search sidebar and a label delete confirmation cost', () => {
  let running: InProcessDaemon;
  let alice: TestUser;
  let carol: TestUser;
  let project: string;
  const SAVED = 40;
  const LABELS = 150;

  beforeAll(async () => {
    running = await daemonInProcess();
    const { d } = running;
    [alice, carol] = [await addUser(d), await addUser(d)];
    project = (await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name: 'Harbour' } })).body.id;
    // Half of them hers alone, half shared with her project (its Rename asks her role there).
    for (let i = 0; i < SAVED; i++) {
      const res = await api(d, '/api/v1/saved-searches', { token: alice.apiKey, body: { name: `ferry ${i}`, search: { query: `ferry ${i}` }, ...(i % 2 ? { project_id: project } : {}) } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    // A vocabulary of LABELS, the first on two documents.
    const names = Array.from({ length: LABELS }, (_, i) => `tag ${String(i).padStart(3, '0')}`);
    for (const [i, some] of [names.slice(0, 100), names.slice(100), [names[0]!]].entries()) {
      const up = await uploadFiles(d, alice.apiKey, [{ name: `note-${i}.txt`, bytes: Buffer.from(`Harbour note ${i} on the ferry timetable.`) }], { projectId: project, query: '?wait=true', fields: { labels: JSON.stringify(some) } });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
    }
  }, 180_000);
  afterAll(async () => running?.stop());

  it('asks access about the sidebar once, not for each saved search’s Rename and Delete…', async () => {
    const asks = async (user: TestUser) => {
      const web = await loggedIn(running.d, user);
      let n = 0;
      const restore = watchCalls(running.services, 'access', () => n++);
      try {
        const page = await web.get('/search');
        expect(page.status).toBe(200);
        return { n, page: page.text };
      } finally {
        restore();
      }
    };
    const none = await asks(carol);
    const many = await asks(alice);
    // Each of hers offered both (she owns the project hers are shared with).
    expect([...many.page.matchAll(/action="\/search\/saved\/[^/"]+\/rename"/g)]).toHaveLength(SAVED);
    expect([...many.page.matchAll(/href="\/search\/saved\/[^/"]+\/delete\?/g)]).toHaveLength(SAVED);
    // Listing them asks twice a search (whether she sees it, and whether as its author only); the offers, once in all.
    // Asked per search and action, they were 4 asks a search.
    expect(many.n - none.n, `access asks for ${SAVED} saved searches`).toBeLessThanOrEqual(2 * SAVED + 1);
  });

  it('counts the one label a delete confirmation names, reading no other', async () => {
    const web = await loggedIn(running.d, alice);
    const labels = (await api(running.d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey })).body.labels as { id: string; name: string }[];
    expect(labels).toHaveLength(LABELS);
    const rows = new Map<string, number>();
    const restore = watchCalls(running.services, 'labels', (method, answer) => rows.set(method, (rows.get(method) ?? 0) + rowsIn(answer)));
    const read = () => [...rows.values()].reduce((a, b) => a + b, 0);
    try {
      const page = await web.get(`/projects/${project}/labels/${labels[0]!.id}/delete`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('It comes off the 2 documents that carry it');
      // The label (is it of this project?) and its count.
      expect(read(), `label rows read: ${JSON.stringify(Object.fromEntries(rows))}`).toBeLessThanOrEqual(2);
      // The API's rename answers the label with its count alike.
      rows.clear();
      const renamed = await api(running.d, `/api/v1/projects/${project}/labels/${labels[0]!.id}`, { method: 'PATCH', token: alice.apiKey, body: { color: 'teal' } });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect(renamed.body.document_count).toBe(2);
      expect(read(), `label rows read: ${JSON.stringify(Object.fromEntries(rows))}`).toBeLessThanOrEqual(2);
    } finally {
      restore();
    }
  });
});
