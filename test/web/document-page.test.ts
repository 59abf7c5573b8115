/**
 * The document page's facts, by type, through the real daemon (#53): a deck counts slides, not pages; what OCR read
 * is a fact, not a warning, and only an OCR'd document explains the OCR badge; a PDF that failed shows no preview
 * (a broken image) and a one-page one no "Page 1 of 1" pager; an e-mail lists its attachments and each links back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePdf } from '../ingest/build-fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { waitFor } from '../helpers/eventually.js';
import { addUser, api, type Daemon, REPO, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

const fixture = (path: string) => readFileSync(join(REPO, 'test/fixtures', path));
const LEGEND = 'Text read from a page image by OCR is marked';

describe('the document page says what a document is', () => {
  let d: Daemon;
  let alice: TestUser;
  let web: WebClient;
  const ids: Record<string, string> = {};

  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      web = await loggedIn(d, alice);
      const up = await uploadFiles(
        d,
        alice.apiKey,
        [
          { name: 'briefing.pptx', bytes: fixture('formats/briefing.pptx') },
          { name: 'scan.pdf', bytes: fixture('ocr/scan-300dpi.pdf') },
          { name: 'broken.pdf', bytes: Buffer.from('%PDF-1.7\nthis is not a PDF at all\n%%EOF\n') },
          { name: 'one.pdf', bytes: makePdf([[{ lines: ['The lighthouse keeper logs the fog signal every hour.'] }]]) },
          { name: 'notes.txt', bytes: Buffer.from('The tide tables for the harbour, read at dawn.\n') },
          { name: 'survey.eml', bytes: fixture('formats/with-attachments.eml') },
        ],
        { query: '?wait=true&wait_timeout=300' },
      );
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      for (const doc of up.body.documents) ids[doc.filename] = doc.id;
      expect(up.body.documents.map((x: any) => [x.filename, x.status])).toEqual([
        ['briefing.pptx', 'ready'],
        ['scan.pdf', 'ready'],
        ['broken.pdf', 'failed'],
        ['one.pdf', 'ready'],
        ['notes.txt', 'ready'],
        ['survey.eml', 'ready'],
      ]);
    },
    { setupTimeoutMs: 360_000 },
  );

  const page = async (name: string) => {
    const res = await web.get(`/documents/${ids[name]}`);
    expect(res.status).toBe(200);
    return res.text;
  };

  it('a deck counts its slides', async () => {
    const deck = await page('briefing.pptx');
    expect(deck).toMatch(/<dt>Slides<\/dt><dd>\d+<\/dd>/);
    expect(deck).not.toContain('<dt>Pages</dt>');
    expect(deck).toMatch(/Show the text search sees \(\d+ chunks?, \d+ slides?\)/);
    expect(await page('one.pdf')).toContain('<dt>Pages</dt><dd>1</dd>');
  });

  it('what OCR read is a fact, not a warning; only an OCR’d document explains the OCR badge', async () => {
    const scan = await page('scan.pdf');
    expect(scan).toMatch(/<dt>OCR<\/dt><dd class="ocr-note">pages 1–2 \(eng\), mean confidence \d{2,3} %<\/dd>/);
    expect(scan).not.toContain('<h2>Warnings</h2>');
    expect(scan).toContain(LEGEND);
    for (const name of ['briefing.pptx', 'one.pdf', 'notes.txt']) expect(await page(name), name).not.toContain(LEGEND);
  });

  it('a failed PDF shows no broken preview, and a one-page PDF no pager', async () => {
    const broken = await page('broken.pdf');
    expect(broken).not.toContain('thumbnail.webp');
    expect(broken).not.toContain('preview-pager');
    const one = await page('one.pdf');
    expect(one).toContain(`/documents/${ids['one.pdf']}/thumbnail.webp`);
    expect(one).not.toContain('preview-pager');
    expect(one).not.toContain('Page 1 of 1');
    expect(await page('scan.pdf')).toContain('<span id="preview-where" aria-live="polite">Page 1 of 2</span>');
  });

  it('an e-mail lists its attachments, linked, and each attachment links back to its e-mail', async () => {
    const message = ids['survey.eml']!;
    const attached = await waitFor(
      async () => {
        const res = await api(d, '/api/v1/documents?limit=100', { token: alice.apiKey });
        const found = res.body.documents.filter((x: any) => x.attached_to === message);
        return found.length === 2 && (found as { id: string; filename: string }[]);
      },
      120_000,
      'the e-mail’s two attachments',
    );
    const mail = await page('survey.eml');
    const list = mail.slice(mail.indexOf('<dt>Attachments</dt>'));
    expect(list).toMatch(/^<dt>Attachments<\/dt><dd><ul class="attachments">/);
    for (const a of attached) {
      expect(list).toContain(`<li><a href="/documents/${a.id}">${a.filename}</a></li>`);
      const res = await web.get(`/documents/${a.id}`);
      expect(res.text).toContain(`<dt>Attached to</dt><dd class="attached-to"><a href="/documents/${message}">survey.eml</a></dd>`);
    }
    expect(await page('notes.txt')).not.toMatch(/<dt>(Attachments|Attached to)<\/dt>/);
  });
});
