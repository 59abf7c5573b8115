/**
 * Every format of #41 through the real daemon (dist/, the built-in model, OCR on): each fixture of
 * test/fixtures/formats (made by make.sh there with pandoc, LibreOffice and ImageMagick) ends ready, a keyword search for a sentence in it finds it, the
 * passage has none of the format's markup, and the passage cites the right page, slide, sheet and rows, or
 * chapter. Renamed files go to the parser their bytes say (an EPUB named .docx is an EPUB, a PNG named .pdf is OCR'd)
 * or fail naming their real format.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../pipeline/helpers.js';
import { hostileFormatFiles } from './hostile-files.js';

const fixture = (name: string) => readFileSync(join(REPO, 'test/fixtures/formats', name));
/** Markup of any of the formats: tags, entities, RTF control words, MIME boundaries, Markdown emphasis and links. */
const MARKUP = /<\/?[a-z][^>]*>|&[a-z]+;|&#\d+;|\\[a-z]+\d*|--XYZ|\*\w|\]\(|^#+ /im;

interface Case {
  file: string;
  type: string;
  query: string;
  /** Text the found passage holds. */
  holds: string;
  title?: string;
  citation?: Record<string, unknown>;
  heading?: string;
  ocr?: boolean;
}

const CASES: Case[] = [
  { file: 'notes.md', type: 'text/markdown', query: 'harbour pilot boards tanker', holds: 'The harbour pilot boards every tanker at dawn near the outer buoy.', title: 'Harbour Notes', heading: 'Arrivals' },
  { file: 'page.html', type: 'text/html', query: 'keeper polishes Fresnel lens', holds: 'The keeper polishes the Fresnel lens & trims the wick before dusk\u00a0falls.', title: 'Lighthouse Keeping', heading: 'Lighthouse Keeping > Lamps' },
  { file: 'berths.csv', type: 'text/csv', query: 'Cassiopeia copper ore', holds: 'vessel: Cassiopeia · berth: east · cargo: copper ore, refined', citation: { unit: 'row' } },
  { file: 'berths.tsv', type: 'text/tab-separated-values', query: 'Delphine salt', holds: 'vessel: Delphine · berth: west · cargo: salt', citation: { unit: 'row', start: 2, end: 2 } },
  { file: 'memo.rtf', type: 'application/rtf', query: 'customs officer stamps manifest triplicate', holds: 'The customs officer stamps each manifest in triplicate before noon. Café receipts are kept.', title: 'Customs Memo', heading: 'Customs Memo' },
  { file: 'message.eml', type: 'message/rfc822', query: 'foghorn sounds thirty seconds', holds: 'The foghorn sounds every thirty seconds while visibility stays below one nautical mile.', title: 'Fog schedule', heading: 'Fog schedule' },
  { file: 'briefing.pptx', type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', query: 'deckhands double mooring lines gale', holds: 'Deckhands double the mooring lines before a gale.', title: 'Port Safety Briefing', heading: 'Mooring lines', citation: { unit: 'slide', start: 3, end: 3 } },
  { file: 'briefing.pptx', type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', query: 'chafing gear protects hawsers', holds: 'Remind the crew that chafing gear protects the hawsers.', citation: { unit: 'slide', start: 3, end: 3 } },
  { file: 'berths.xlsx', type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', query: 'Borealis refrigerated mackerel', holds: 'vessel: Borealis · berth: south · cargo: refrigerated mackerel', citation: { unit: 'row', sheet: 'Berths' } },
  { file: 'report.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', query: 'dredger deepened approach channel', holds: 'The dredger deepened the approach channel to twelve metres last winter.', title: 'Dredging Report', heading: 'Channel depth' },
  { file: 'logbook.odt', type: 'application/vnd.oasis.opendocument.text', query: 'navigator plots course shoals starlight', holds: 'The navigator plots a course around the shoals by starlight.', title: 'Ship Logbook', heading: 'Voyage > Second watch' },
  { file: 'drills.odp', type: 'application/vnd.oasis.opendocument.presentation', query: 'ring buoy swimmer', holds: 'Throw the ring buoy and keep pointing at the swimmer.', title: 'Crew Drills', heading: 'Man overboard', citation: { unit: 'slide', start: 3, end: 3 } },
  { file: 'tides.ods', type: 'application/vnd.oasis.opendocument.spreadsheet', query: 'Penzance slack water pier', holds: 'port: Penzance · high water: slack water lingers near the pier', title: 'Tide Table', citation: { unit: 'row', sheet: 'Tides' } },
  { file: 'coast.epub', type: 'application/epub+zip', query: 'schooner aground reef equinox storm', holds: 'The schooner ran aground on the reef during the equinox storm.', title: 'Tales of the Coast', heading: 'The Wreck', citation: { unit: 'chapter', start: 2, end: 2 } },
  { file: 'coast.epub', type: 'application/epub+zip', query: 'smugglers brandy casks', holds: 'brandy\u00a0casks', heading: 'The Smugglers', citation: { unit: 'chapter', start: 3, end: 3 } },
  { file: 'sluice.png', type: 'image/png', query: 'lockkeeper sluice', holds: 'sluice', citation: { unit: 'page', start: 1, end: 1 }, ocr: true },
  { file: 'tower.jpg', type: 'image/jpeg', query: 'gulls nest signal tower', holds: 'signal tower', citation: { unit: 'page', start: 1, end: 1 }, ocr: true },
  { file: 'ferry.webp', type: 'image/webp', query: 'ferries leave quay', holds: 'quay', citation: { unit: 'page', start: 1, end: 1 }, ocr: true },
  { file: 'scan.tiff', type: 'image/tiff', query: 'buoy inspections', holds: 'buoy inspections', citation: { unit: 'page', end: 2 }, ocr: true },
];

async function upload(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<any> {
  const res = await uploadFiles(d, user.apiKey, [{ name, bytes }], { query: '?wait=true&wait_timeout=300' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.documents[0];
}

describe('formats through the daemon', () => {
  let d: Daemon;
  let alice: TestUser;
  const docs = new Map<string, any>();
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  it('each format ends ready, typed by its bytes', async () => {
    for (const file of [...new Set(CASES.map((c) => c.file))]) {
      const doc = await upload(d, alice, file, fixture(file));
      const c = CASES.find((x) => x.file === file)!;
      expect(doc, file).toMatchObject({ status: 'ready', content_type: c.type, error: null });
      expect(doc.chunk_count, file).toBeGreaterThan(0);
      docs.set(file, doc);
    }
    expect(docs.get('scan.tiff').pages).toBe(2);
    expect(docs.get('briefing.pptx').pages).toBe(3);
    // Its CSV attachment is a document of its own (email-attachments.test.ts), not a warning.
    expect(docs.get('message.eml').warnings.join(' ')).not.toMatch(/tides\.csv/);
  }, 300_000);

  for (const c of CASES) {
    it(`${c.file}: "${c.query}" finds the passage, clean and cited`, async () => {
      const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: c.query, limit: 5} });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const hit = res.body.results.find((r: any) => r.document.filename === c.file && r.text.includes(c.holds));
      expect(hit, `${c.file}: ${JSON.stringify(res.body.results.map((r: any) => [r.document.filename, r.text]))}`).toBeDefined();
      expect(hit.text).not.toMatch(MARKUP);
      if (c.heading) expect(hit.heading).toBe(c.heading);
      if (c.citation) expect(hit.citation).toMatchObject(c.citation);
      else expect(hit.citation).toBeUndefined();
      if (c.ocr) expect(hit.ocr).toBe(true);
    }, 60_000);
  }

  it('leaves what is not text out: scripts, styles, navigation, front matter, slide-number placeholders', async () => {
    for (const [file, gone] of [['page.html', /tracking|color: red|About us|Copyright/], ['notes.md', /tags:|port\]/], ['drills.odp', /<number>/]] as const) {
      const text = await api(d, `/api/v1/documents/${docs.get(file).id}/text`, { token: alice.apiKey });
      expect(text.status).toBe(200);
      const all = JSON.stringify(text.body);
      expect(all, file).not.toMatch(gone);
    }
  }, 30_000);

  it('reads a renamed file by its bytes: an EPUB named .docx, a PNG named .pdf; a damaged EPUB fails as an EPUB', async () => {
    const epub = await upload(d, alice, 'novel.docx', fixture('coast.epub'));
    expect(epub).toMatchObject({ status: 'ready', content_type: 'application/epub+zip' });
    const png = await upload(d, alice, 'scan.pdf', fixture('sluice.png'));
    expect(png).toMatchObject({ status: 'ready', content_type: 'image/png' });
    const bytes = fixture('coast.epub');
    const broken = await upload(d, alice, 'broken.docx', bytes.subarray(0, bytes.length - 200));
    expect(broken.content_type).toBe('application/epub+zip');
    expect(broken.status).toBe('failed');
    expect(broken.error).toMatch(/^the EPUB is damaged or truncated/);
  }, 120_000);

  it('fails each hostile file on its own, quickly and clearly, and goes on with the next upload', async () => {
    const hostile = hostileFormatFiles();
    for (const [name, bytes, message] of hostile) {
      const doc = await upload(d, alice, name, bytes);
      expect(doc.status, name).toBe('failed');
      // Its own error, not the parse time limit's: it failed on what it is, not by running out the clock.
      expect(doc.error, name).toMatch(message);
      expect(doc.error, name).not.toMatch(/took longer than/);
    }
    const after = await upload(d, alice, 'after.txt', Buffer.from('The daemon still reads plain words after the hostile files.\n'));
    expect(after.status).toBe('ready');
  }, 300_000);
});
