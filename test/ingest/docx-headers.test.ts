/**
 * A Word document's header and footer through the real daemon: read once each (not once per page), the header
 * before the body, the page-number paragraph left out, and a keyword search for the order number the header holds
 * finds the document. The fixture (test/fixtures/formats/make-letterhead.sh) has three pages under one header and
 * footer; ../shared/eval's header-only documents (skipped with a reason when absent) read as their headers.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from '../../src/ingest/parsers/docx.js';
import { addUser, api, type Daemon, REPO, SHARED, type TestUser } from '../helpers/daemon.js';
import { unmet } from '../helpers/requirement.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { storedChunks, uploadFiles } from './pipeline/helpers.js';

const LETTERHEAD = readFileSync(join(REPO, 'test/fixtures/formats/letterhead.docx'));
const DOCS = join(SHARED, 'eval/docs');
const corpus = unmet(existsSync(join(DOCS, 'manifest.tsv')) ? null : `../shared/eval/docs is absent (not found at ${DOCS})`);
const count = (text: string, part: string): number => text.split(part).length - 1;

describe('a Word header and footer through the daemon', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  it('are read once, the header first, without the page number; the header finds the document', { timeout: 120_000 }, async () => {
    const up = await uploadFiles(d, user.apiKey, [{ name: 'standing-order.docx', bytes: LETTERHEAD }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = (up.body as { documents: { id: string; status: string; warnings: string[] }[] }).documents[0]!;
    expect(doc.status).toBe('ready');
    expect(doc.warnings).toEqual([]);
    const text = (await storedChunks(d.dataDir, doc.id)).rows.map((r) => r.text).join('\n').replace(/\s+/g, ' ');
    expect(count(text, 'Harbour Authority — Standing Order SO-4471')).toBe(1);
    expect(count(text, 'Confidential: quay staff only')).toBe(1);
    expect(text.indexOf('Standing Order SO-4471')).toBeLessThan(text.indexOf('Mooring lines are inspected'));
    expect(text.indexOf('Pilots report to the tower')).toBeLessThan(text.indexOf('Confidential: quay staff only'));
    expect(text).not.toMatch(/\bPage\b/);

    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'SO-4471', mode: 'keyword' } });
    expect(res.status).toBe(200);
    expect((res.body as { results: { document: { id: string } }[] }).results.map((r) => r.document.id)).toContain(doc.id);
  });
});

describe.skipIf(corpus)(`real-world headers and footers${corpus ? ` (skipped: ${corpus})` : ''}`, () => {
  const read = async (file: string) => (await parse(readFileSync(join(DOCS, 'docx', file)))).blocks.map((b) => b.text);

  it('a document with only a header and a footer reads as them', async () => {
    expect(await read('mammoth-header-footer.docx')).toEqual(['Header text', 'Footer text']);
  });

  it('first, even and odd page headers are each read once, before the body', async () => {
    expect(await read('pydocx-odd-even-headers.docx')).toEqual(['Even page header.', 'Odd page header.', 'First Page.', 'Second Page.']);
  });

  it('a header holding only an image is no text', async () => {
    const doc = await parse(readFileSync(join(DOCS, 'docx/tika-image-in-header-only.docx')));
    expect(doc.blocks).toEqual([]);
  });
});
