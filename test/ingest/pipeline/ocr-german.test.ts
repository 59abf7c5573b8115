/**
 * A scanned German page through the real daemon (#59 item 6), read in the languages its upload, its project or the
 * operator name. German is read with the trained data Debian installs for Tesseract (tesseract-ocr-deu; no npm data
 * package is installed for it) — by native Tesseract and by the tesseract.js fallback alike — so its umlauts and ß are
 * read, the document says which language read it, and a German keyword query finds it. Read with the default English
 * data, the same page's "Müllabfuhr" comes out as "Miillabfuhr" and the query finds nothing: the German data is what
 * makes the difference. A language whose data is not installed is a warning on the document that names what to
 * install, not a silent English reading.
 *
 * Two daemons: the default (English, native Tesseract) where uploads and projects name German, and one whose operator
 * default is German read by tesseract.js. Each upload goes to its own project (the same bytes twice in one project
 * would be the same document).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv } from '../../cli/cli-env.js';
import { addUser, api, type Daemon, REPO, runCli, type TestUser } from '../../helpers/daemon.js';
import { unmet } from '../../helpers/requirement.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { storedChunks, uploadFiles } from './helpers.js';

const page = readFileSync(join(REPO, 'test/fixtures/ocr/scan-german.pdf'));
const installed = (spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' }).stdout ?? '').split('\n').map((l) => l.trim());
const missing = unmet(installed.includes('deu') ? null : 'Tesseract with German trained data is missing (Debian: tesseract-ocr tesseract-ocr-deu)');
const WORDS = ['Lindenstraße', 'Fahrräder', 'Gebühren für die Müllabfuhr', 'überprüft', 'Schlüssel', 'Erdgeschoß', 'ganztägig'];

interface Doc {
  id: string;
  status: string;
  warnings: string[];
  ocr_languages: string | null;
}

/** A project of its own for one upload of the page. */
async function project(d: Daemon, user: TestUser, name: string): Promise<string> {
  const res = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { id: string }).id;
}

/** What OCR read of the document, and the documents of `projectId` a German keyword query finds. */
async function readBack(d: Daemon, user: TestUser, doc: Doc, projectId: string) {
  expect(doc.status).toBe('ready');
  const text = (await storedChunks(d.dataDir, doc.id)).rows.map((r) => r.text).join('\n').replace(/\s+/g, ' ');
  const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'Müllabfuhr', mode: 'keyword', project_ids: [projectId] } });
  expect(res.status).toBe(200);
  return { read: WORDS.filter((w) => text.includes(w)), found: (res.body as { results: { document: { id: string } }[] }).results.map((r) => r.document.id), text };
}

const ocrNote = (languages: string) => new RegExp(`^OCR: page 1 \\(${languages}\\), mean confidence \\d{2,3} %$`);

describe.skipIf(missing)(`a scanned German page on a server reading English by default${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  const upload = async (projectId: string, fields: Record<string, string> = {}) => {
    const up = await uploadFiles(d, user.apiKey, [{ name: 'hausordnung.pdf', bytes: page }], { projectId, fields, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return (up.body as { documents: Doc[] }).documents[0]!;
  };

  it('without a setting misreads its umlauts, and the German query finds nothing', { timeout: 300_000 }, async () => {
    const p = await project(d, user, 'english default');
    const doc = await upload(p);
    expect(doc.ocr_languages).toBeNull();
    expect(doc.warnings).toEqual([expect.stringMatching(ocrNote('eng'))]);
    const { read, found, text } = await readBack(d, user, doc, p);
    expect(read, text).toEqual([]);
    expect(found).toEqual([]);
  });

  it("an upload's ocr_languages=deu reads it in German: the document says so and the German query finds it", { timeout: 300_000 }, async () => {
    const p = await project(d, user, 'upload field');
    const doc = await upload(p, { ocr_languages: 'deu' });
    expect(doc.ocr_languages).toBe('deu');
    expect(doc.warnings).toEqual([expect.stringMatching(ocrNote('deu'))]);
    const { read, found } = await readBack(d, user, doc, p);
    expect(read).toEqual(WORDS);
    expect(found).toEqual([doc.id]);
  });

  it("a project's OCR languages set with `projects settings` read its uploads, and `documents show` names them", { timeout: 300_000 }, async () => {
    const p = await project(d, user, 'archiv');
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const set = await runCli(['projects', 'settings', 'archiv', '--ocr-languages', 'deu+eng', '--json'], { env });
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ id: p, ocr_languages: 'deu+eng', language: null });

    const file = join(tmpdir(), `hausordnung-${process.pid}.pdf`);
    writeFileSync(file, page);
    const up = await runCli(['upload', file, '--project', 'archiv', '--wait', '--json'], { env, timeoutMs: 300_000 });
    expect(up.code, up.stderr).toBe(0);
    const doc = (JSON.parse(up.stdout) as { documents: Doc[] }).documents[0]!;
    expect(doc.ocr_languages).toBe('deu+eng');
    expect(doc.warnings).toEqual([expect.stringMatching(ocrNote('deu\\+eng'))]);
    expect((await readBack(d, user, doc, p)).found).toEqual([doc.id]);
    const show = await runCli(['documents', 'show', doc.id], { env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/OCR languages\s+deu\+eng/);

    const cleared = await runCli(['projects', 'settings', 'archiv', '--ocr-languages', 'auto', '--json'], { env });
    expect(JSON.parse(cleared.stdout)).toMatchObject({ ocr_languages: null });
  });

  it('a language whose data is not installed is a warning on the document naming what to install, and what read it instead', { timeout: 300_000 }, async () => {
    const p = await project(d, user, 'not installed');
    const doc = await upload(p, { ocr_languages: 'ita+deu' });
    expect(doc.ocr_languages).toBe('ita+deu');
    expect(doc.warnings).toEqual([
      'OCR language "ita" is not installed on this server (Debian: tesseract-ocr-ita, or the npm package @tesseract.js-data/ita): read with deu instead',
      expect.stringMatching(ocrNote('deu')),
    ]);
    const alone = await upload(await project(d, user, 'none installed'), { ocr_languages: 'ita' });
    expect(alone.warnings).toEqual([expect.stringContaining('OCR language "ita" is not installed on this server'), expect.stringMatching(ocrNote('eng'))]);
    expect(alone.warnings[0]).toContain('read with eng instead');
  });

  it("an upload's language is the one its text is analysed in, not the detected one", { timeout: 120_000 }, async () => {
    const text = Buffer.from('Die Mülltonnen werden jeden Dienstag geleert. Bitte stellen Sie die Tonnen rechtzeitig an die Straße.\n');
    const up = await uploadFiles(d, user.apiKey, [{ name: 'notiz.txt', bytes: text }], { fields: { language: 'NL' }, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.documents[0]).toMatchObject({ status: 'ready', language_setting: 'nl', language: 'nl', ocr_languages: null });
    const detected = await uploadFiles(d, user.apiKey, [{ name: 'notiz2.txt', bytes: Buffer.concat([text, Buffer.from('Danke.\n')]) }], { query: '?wait=true' });
    expect(detected.body.documents[0]).toMatchObject({ language_setting: null, language: 'de' });
  });

  it('refuses settings that are not language codes, naming the field', async () => {
    const lang = await uploadFiles(d, user.apiKey, [{ name: 'a.txt', bytes: Buffer.from('x') }], { fields: { language: 'deutsch' } });
    expect(lang.status).toBe(400);
    expect(JSON.stringify(lang.body)).toContain('language');
    const bad = await uploadFiles(d, user.apiKey, [{ name: 'a.txt', bytes: Buffer.from('x') }], { fields: { ocr_languages: 'deu; rm -rf' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('ocr_languages');
    const p = await project(d, user, 'bad settings');
    const patch = await api(d, `/api/v1/projects/${p}`, { method: 'PATCH', token: user.apiKey, body: { ocr_languages: '../etc' } });
    expect(patch.status).toBe(400);
    const projectLang = await api(d, `/api/v1/projects/${p}`, { method: 'PATCH', token: user.apiKey, body: { language: 'German' } });
    expect(projectLang.status).toBe(400);
  });
});

describe.skipIf(missing)(`a scanned German page with --ocr-languages deu --ocr tesseract.js${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  }, { args: ['--ocr-languages', 'deu', '--ocr', 'tesseract.js'] });

  it('reads its umlauts and ß with the operator default, says German read it, and a German query finds it', { timeout: 300_000 }, async () => {
    const up = await uploadFiles(d, user.apiKey, [{ name: 'hausordnung.pdf', bytes: page }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = (up.body as { documents: Doc[] }).documents[0]!;
    expect(doc.warnings).toEqual([expect.stringMatching(ocrNote('deu'))]);
    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'Müllabfuhr', mode: 'keyword' } });
    expect(res.body.results.map((r: { document: { id: string } }) => r.document.id)).toEqual([doc.id]);
    const text = (await storedChunks(d.dataDir, doc.id)).rows.map((r) => r.text).join('\n').replace(/\s+/g, ' ');
    for (const w of WORDS) expect(text, w).toContain(w);
  });
});
