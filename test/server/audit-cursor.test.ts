/**
 * A cursor the audit log cannot take — altered, cut short, too long, or another list's — through the real daemon:
 * the API answers the error body every route gives (`{error: {code, message, details, request_id}}`) with the words
 * every list uses, saying what to do (leave it out, start from the first page), for a page and for the JSON Lines
 * export alike (whose answer is a stream: refused before it starts); the Admin page starts again from the newest
 * events and says so, as the Documents page does with a stale link (docs/api.md "Conventions").
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn } from './web-client.js';

const REFUSED = 'query.cursor: not a cursor this server issued for this list, or no longer valid; leave it out to start again from the first page';

describe('a cursor the audit log cannot take', () => {
  let d: Daemon;
  let admin: TestUser;
  let next: string;
  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d); // the first account: the admin
    for (const name of ['one', 'two', 'three', 'four']) expect((await api(d, '/api/v1/keys', { token: admin.apiKey, body: { name } })).status).toBe(201);
    const first = await api(d, '/api/v1/audit-events?limit=2', { token: admin.apiKey });
    expect(first.status).toBe(200);
    next = first.body.next_cursor;
    expect(next).toEqual(expect.any(String));
  });

  /** Cursors that are not the audit log's: each is refused with the same words. */
  const bad = () => ({
    garbage: 'garbage',
    'cut short': next.slice(0, -4),
    'too long': next + 'A'.repeat(200),
    "another list's": Buffer.from(`prj_${Buffer.from(next, 'base64url').toString('utf8').slice(4)}`, 'utf8').toString('base64url'),
  });

  it('the API: 400 with the error body, naming the cursor and what to do; a page and the JSON Lines export alike', async () => {
    expect((await api(d, `/api/v1/audit-events?limit=2&cursor=${next}`, { token: admin.apiKey })).status).toBe(200);
    for (const [what, cursor] of Object.entries(bad())) {
      for (const format of ['json', 'jsonl']) {
        const res = await api(d, `/api/v1/audit-events?format=${format}&cursor=${encodeURIComponent(cursor)}`, { token: admin.apiKey });
        expect(res.status, `${what} cursor, ${format}`).toBe(400);
        expect(res.headers.get('content-type'), `${what} cursor, ${format}`).toMatch(/^application\/json/);
        expect(res.body, `${what} cursor, ${format}`).toEqual({
          error: { code: 'invalid_request', message: REFUSED, details: [{ path: 'query.cursor', message: REFUSED }], request_id: res.headers.get('x-request-id') },
        });
      }
    }
  });

  it('the Admin page starts again from the newest events and says why', async () => {
    const web = await loggedIn(d, admin);
    const newest = await web.get('/admin/audit');
    const ids = (text: string) => [...text.matchAll(/<code>([a-z_.]+)<\/code>/g)].map((m) => m[1]);
    for (const [what, cursor] of Object.entries(bad())) {
      const page = await web.get(`/admin/audit?cursor=${encodeURIComponent(cursor)}`);
      expect(page.status, `${what} cursor`).toBe(200);
      expect(page.text, `${what} cursor`).toContain('<p class="error" role="alert">That page link is out of date; showing the newest events.</p>');
      expect(ids(page.text), `${what} cursor`).toEqual(ids(newest.text));
    }
  });
});
