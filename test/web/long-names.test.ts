/**
 * Names people type, through the web forms and the API of a real daemon: a form's message cut between characters
 * (labels of emoji past the message's 600 characters gave a 500 after the labels were saved), a file name with `"`
 * kept as typed (browsers send it as %22 in the form's multipart body), and a saved search's name refused with a
 * right-to-left override, as every other name is.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const flashOf = (page: string) => {
  const m = /<p class="(?:notice|error) flash" role="(?:status|alert)">([^<]*)<\/p>/.exec(page);
  return m ? decode(m[1]!) : null;
};

describe('names people type', () => {
  let d: Daemon;
  let user: TestUser;
  let web: WebClient;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    web = await loggedIn(d, user);
  });

  it('cuts a long message between characters: the form answers with its page, saying it was cut', async () => {
    const up = await uploadFiles(d, user.apiKey, [{ name: 'party.txt', bytes: Buffer.from('Balloons and streamers for the party.') }], { query: '?wait=true' });
    const id = up.body.documents[0].id as string;
    await web.get(`/documents/${id}`);
    // Nine labels of 30 emoji each: the message naming them passes 600 characters, character 600 inside an emoji.
    const labels = Array.from({ length: 9 }, (_, i) => `aa${'🎉'.repeat(30)}${i}`);
    const res = await web.submit(`/documents/${id}/labels`, { _csrf: web.csrf, labels: labels.join(', ') });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    const message = flashOf(res.text)!;
    expect(message.startsWith('“party.txt” is labelled')).toBe(true);
    expect(message.endsWith('…')).toBe(true);
    expect(message.length).toBeLessThanOrEqual(600);
    expect(() => encodeURIComponent(message)).not.toThrow();
    const doc = await api(d, `/api/v1/documents/${id}`, { token: user.apiKey });
    expect((doc.body.labels as string[]).sort()).toEqual([...labels].sort());
  });

  it('keeps a file name with quotes as typed: the %22 a browser sends is read back', async () => {
    // What Chromium and Firefox put in a form's multipart body for `Report "final".txt`.
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('The final report on the harbour works.')]), 'Report %22final%22.txt');
    const res = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { documents: { filename: string }[] }).documents[0]!.filename).toBe('Report "final".txt');
  });

  it("refuses a saved search's name with a right-to-left override, naming the character", async () => {
    const res = await api(d, '/api/v1/saved-searches', { token: user.apiKey, body: { name: 's\u202eabc', query: 'harbour' } });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/U\+202E/);
  });
});
