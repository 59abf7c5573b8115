/**
 * Text from fonts without a /ToUnicode map: pdf.js decodes it as mojibake, which must go to OCR per page rather than
 * be kept as the document's text; real text in other scripts, and formulas, must not. The generated fixture
 * (test/fixtures/ocr/make-no-tounicode.sh) has one of each page; the corpus of ../shared/eval/docs adds a CID font
 * read as code points and real Chinese, Japanese, Arabic, Hebrew, Thai, Russian and formula-heavy pages (skipped with
 * a reason when absent). Through the daemon, the garbled page is read by Tesseract and found by its words.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/ingest/parsers/pdf.js';
import { addUser, type Daemon, REPO, SHARED, type TestUser } from '../helpers/daemon.js';
import { unmet } from '../helpers/requirement.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { storedChunks, uploadFiles } from './pipeline/helpers.js';

const FIXTURE = readFileSync(join(REPO, 'test/fixtures/ocr/no-tounicode.pdf'));
const DOCS = join(SHARED, 'eval/docs');
const corpus = unmet(existsSync(join(DOCS, 'manifest.tsv')) ? null : `../shared/eval/docs is absent (not found at ${DOCS})`);
const tesseract = unmet(spawnSync('tesseract', ['--version']).status === 0 ? null : 'native Tesseract is not installed (apt-get install -y tesseract-ocr tesseract-ocr-eng)');
const text = (blocks: { text: string }[]): string => blocks.map((b) => b.text).join('\n');

describe('pages whose fonts have no Unicode map', () => {
  it('sends the mojibake page to OCR and keeps the real text of other scripts', async () => {
    const doc = await parse(FIXTURE);
    expect(doc.ocrPages).toEqual([2]);
    expect(doc.blocks.every((b) => b.page === 1)).toBe(true);
    const page1 = text(doc.blocks);
    for (const words of ['The harbour master keeps the tide tables', 'Η ελληνική αποτελεί', 'в студеную зимнюю пору', 'α + β ≤ γ']) {
      expect(page1).toContain(words);
    }
    expect(doc.warnings).toEqual(['1 of 2 pages have no usable text layer (scanned?): page 2']);
  });

  describe.skipIf(corpus)(`real-world files${corpus ? ` (skipped: ${corpus})` : ''}`, () => {
    const read = (file: string) => parse(readFileSync(join(DOCS, 'pdf', file)));

    it('sends a CID font read as code points to OCR', async () => {
      const doc = await read('garbled-no-tounicode.pdf');
      expect(doc.ocrPages).toEqual([1]);
      expect(doc.blocks).toEqual([]);
    });

    it.each([
      'chinese-simplified.pdf',
      'chinese-invoice-form.pdf',
      'japanese-academic.pdf',
      'arabic-cid-truetype.pdf',
      'hebrew.pdf',
      'thai.pdf',
      'mixed-scripts.pdf',
      'russian-drawing-stamp.pdf',
      'fullwidth-latin.pdf',
      'ieee-journal-article.pdf',
      'tracemonkey.pdf',
    ])('keeps the text of %s', async (file) => {
      const doc = await read(file);
      expect(doc.ocrPages).toBeUndefined();
      expect(doc.blocks.length).toBeGreaterThan(0);
    });
  });
});

describe.skipIf(tesseract)(`a mojibake page through the daemon${tesseract ? ` (skipped: ${tesseract})` : ''}`, () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  it('is read by OCR, not kept as garbage', { timeout: 300_000 }, async () => {
    const up = await uploadFiles(d, user.apiKey, [{ name: 'harbour.pdf', bytes: FIXTURE }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = (up.body as { documents: { id: string; status: string; warnings: string[] }[] }).documents[0]!;
    expect(doc.status).toBe('ready');
    expect(doc.warnings).toEqual([expect.stringMatching(/^OCR: page 2 \(eng\), mean confidence \d+ %$/)]);
    const chunks = (await storedChunks(d.dataDir, doc.id)).rows.map((r) => r.text).join('\n').replace(/\s+/g, ' ');
    expect(chunks).toContain('The harbour master keeps the tide tables');
    expect(chunks).toContain('Lighthouse keepers logged every passing schooner');
    expect(chunks).toContain('granite breakwater');
    // The mojibake pdf.js made of page 2's words.
    expect(chunks).not.toMatch(/IJKLMLNOP|SPTNKK/);
  });
});
