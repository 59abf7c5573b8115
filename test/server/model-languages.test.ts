/**
 * The embedder's language limits where a person sees them (#59 item 7), through one daemon with the built-in model
 * (it reads English): a project page lists its documents' languages beside those the model reads, and warns when most
 * of them are in others; health's `embedder` says which languages the model reads and notes a library mostly in
 * languages it does not read (no counts or codes: health is public).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn } from './web-client.js';

const GERMAN = [
  'Die Mülltonnen werden jeden Dienstag geleert. Bitte stellen Sie die Tonnen rechtzeitig an die Straße und holen Sie sie am Abend wieder herein.',
  'Der Fahrradkeller ist nur für Fahrräder der Hausbewohner bestimmt. Sperrige Gegenstände gehören nicht in den Keller, sondern zum Wertstoffhof.',
  'Ruhezeiten gelten werktags von 13 bis 15 Uhr und ab 22 Uhr. Bitte nehmen Sie Rücksicht auf Ihre Nachbarn, besonders im Treppenhaus.',
];
const ENGLISH = 'The office is closed on public holidays. Staff who need access to the building must ask the facilities team a day ahead.';

describe('the languages the embedding model reads, beside the documents\'', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  const project = async (name: string, texts: string[]) => {
    const p = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name } });
    expect(p.status).toBe(201);
    const up = await uploadFiles(d, user.apiKey, texts.map((t, i) => ({ name: `${name}-${i}.txt`, bytes: Buffer.from(`${t}\n`) })), { projectId: p.body.id, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return p.body.id as string;
  };

  it('the project page names its languages and the model\'s, and warns only where most are unread; health notes the library', { timeout: 180_000 }, async () => {
    const english = await project('office', [ENGLISH]);
    const german = await project('hausordnung', GERMAN);
    const web = await loggedIn(d, user);

    const de = await web.get(`/projects/${german}`);
    expect(de.status).toBe(200);
    expect(de.text).toMatch(/Languages: German \(de\) 3 — the search model \(builtin:all-MiniLM-L6-v2(-int8)?\) reads English \(en\)/);
    expect(de.text).toMatch(/class="notice warning languages-note"[^>]*>100 % of these documents are in languages the search model does not read \(German\)/);

    const en = await web.get(`/projects/${english}`);
    expect(en.text).toMatch(/Languages: English \(en\) 1 — the search model \(builtin:all-MiniLM-L6-v2(-int8)?\) reads English \(en\)/);
    expect(en.text).not.toContain('languages-note');

    // Three German documents to one English: the library is mostly in a language the model does not read.
    const health = await api(d, '/api/v1/health');
    expect(health.body.components.embedder).toMatchObject({ status: 'up', languages: ['en'], note: expect.stringContaining('most documents are in languages this embedding model does not read') });
    expect(health.body.components.embedder.note).not.toMatch(/\bde\b|%|\b[0-9]+ documents/);
  });
});
