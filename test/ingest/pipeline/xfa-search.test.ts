/**
 * A pure XFA form uploaded to a real daemon (built binary, built-in model) is found by its field captions and the
 * values filled in, on the form's pages — not indexed as its "Please wait..." placeholder page.
 * test/fixtures/xfa/mooring-permit.pdf is written by make.py beside it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from './helpers.js';

interface Hit {
  text: string;
  page_start: number;
  page_end: number;
}

describe('a pure XFA form through the daemon', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    const bytes = readFileSync(join(REPO, 'test/fixtures/xfa/mooring-permit.pdf'));
    const res = await uploadFiles(d, user.apiKey, [{ name: 'mooring-permit.pdf', bytes }], { query: '?wait=true' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.documents[0].status, JSON.stringify(res.body)).toBe('ready');
  }, { timeoutMs: 60_000, setupTimeoutMs: 240_000 });

  const search = async (query: string): Promise<Hit[]> => {
    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query, limit: 5 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results as Hit[];
  };

  it.each([
    ['a field caption on page 1', 'overall length of the hull in metres', /Overall length of the hull \(metres\) 11\.4/, 1],
    ['a filled value on page 1', 'Cormorant Wanderlust', /Registered name of the vessel Cormorant Wanderlust/, 1],
    ['a filled value on page 2', 'Ingrid Vasquez-Thorne', /Name of the master Ingrid Vasquez-Thorne/, 2],
  ])('finds %s', async (_, query, answer, page) => {
    const hits = await search(query);
    const hit = hits.find((h) => answer.test(h.text.replace(/\s+/g, ' ')));
    expect(hit, JSON.stringify(hits.map((h) => h.text.slice(0, 120)))).toBeDefined();
    expect(hit!.page_start).toBeLessThanOrEqual(page);
    expect(hit!.page_end).toBeGreaterThanOrEqual(page);
  });

  it('holds no placeholder text', async () => {
    const hits = await search('Please wait, your PDF viewer may not be able to display this type of document');
    expect(hits.filter((h) => /Please wait|PDF viewer/.test(h.text))).toEqual([]);
  });
});
