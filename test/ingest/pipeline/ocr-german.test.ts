/**
 * A scanned German page through the real daemon (#59 item 6): with `--ocr-languages deu` it is read with the German
 * trained data Debian installs for Tesseract (tesseract-ocr-deu; no npm data package is installed for it) — by native
 * Tesseract and by the tesseract.js fallback alike — so its umlauts and ß are read, the document says which language
 * read it, and a German keyword query finds it. Read with the default English data, the same page's "Müllabfuhr"
 * comes out as "Miillabfuhr", and the query finds nothing: the German data is what makes the difference.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { unmet } from '../../helpers/requirement.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { storedChunks, uploadFiles } from './helpers.js';

const page = readFileSync(join(REPO, 'test/fixtures/ocr/scan-german.pdf'));
const installed = (spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' }).stdout ?? '').split('\n').map((l) => l.trim());
const missing = unmet(installed.includes('deu') ? null : 'Tesseract with German trained data is missing (Debian: tesseract-ocr tesseract-ocr-deu)');

const SETUPS = [
  { label: '--ocr-languages deu (native Tesseract)', args: ['--ocr-languages', 'deu'], german: true },
  { label: '--ocr-languages deu --ocr tesseract.js', args: ['--ocr-languages', 'deu', '--ocr', 'tesseract.js'], german: true },
  { label: 'the default English data', args: [], german: false },
] as const;

for (const setup of SETUPS) {
  describe.skipIf(missing)(`a scanned German page with ${setup.label}${missing ? ` (skipped: ${missing})` : ''}`, () => {
    let d: Daemon;
    let user: TestUser;
    daemonForSuite(async (started) => {
      d = started;
      user = await addUser(d);
    }, { args: [...setup.args] });

    it(setup.german ? 'reads its umlauts and ß, says German read it, and a German query finds it' : 'misreads its umlauts, and the German query finds nothing', { timeout: 300_000 }, async () => {
      const up = await uploadFiles(d, user.apiKey, [{ name: 'hausordnung.pdf', bytes: page }], { query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      const doc = (up.body as { documents: { id: string; status: string; warnings: string[] }[] }).documents[0]!;
      expect(doc.status).toBe('ready');
      expect(doc.warnings).toEqual([expect.stringMatching(new RegExp(`^OCR: page 1 \\(${setup.german ? 'deu' : 'eng'}\\), mean confidence \\d{2,3} %$`))]);
      const text = (await storedChunks(d.dataDir, doc.id)).rows.map((r) => r.text).join('\n').replace(/\s+/g, ' ');
      const words = ['Lindenstraße', 'Fahrräder', 'Gebühren für die Müllabfuhr', 'überprüft', 'Schlüssel', 'Erdgeschoß', 'ganztägig'];
      if (setup.german) for (const w of words) expect(text, w).toContain(w);
      else expect(words.filter((w) => text.includes(w)), text).toEqual([]);

      const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'Müllabfuhr', mode: 'keyword' } });
      expect(res.status).toBe(200);
      const found = (res.body as { results: { document: { id: string } }[] }).results.map((r) => r.document.id);
      expect(found).toEqual(setup.german ? [doc.id] : []);
    });
  });
}
