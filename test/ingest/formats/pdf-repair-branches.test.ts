/**
 * PDFs whose page tree is damaged in the ways the repair (src/ingest/parsers/pdf-page-tree.ts) meets, through the
 * real upload API of a daemon (dist/), generated here: a few KB each, so none is committed. Each upload is read
 * back as the API shows it (status, page count, warnings or error, and which page each line landed on).
 */
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../pipeline/helpers.js';
import { assemblePdf } from '../build-fixtures.js';

const LINES = [
  'The harbour pilot boards every tanker at dawn near the outer buoy.',
  'Tugboats wait at the breakwater for the evening tide to turn.',
  'Gulls circle the fish market while the auction bell rings twice.',
  'The night ferry crosses the sound with its deck lights dimmed.',
];

/** Page `i`'s object (one line, LINES[i]), in every PDF `pdf` builds. */
const page = (i: number) => `${5 + 2 * i} 0 R`;

/**
 * `pages` pages of one line each: object 1 the catalog, 2 the root /Pages node `root`, 3 the font, page i object
 * 5 + 2i (`pageExtra(i)` added to its dictionary) with its content 4 + 2i, then `more` from 4 + 2 × `pages` on.
 */
function pdf(root: string, pages: number, opts: { pageExtra?: (i: number) => string; more?: (string | Buffer)[] } = {}): Buffer {
  const objects: (string | Buffer)[] = ['<< /Type /Catalog /Pages 2 0 R >>', root, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>'];
  for (let i = 0; i < pages; i++) {
    const ops = `BT /F1 12 Tf 72 700 Td (${LINES[i]}) Tj ET\n`;
    objects.push(`<< /Length ${ops.length} >>\nstream\n${ops}endstream`);
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${4 + 2 * i} 0 R ${opts.pageExtra?.(i) ?? ''}>>`);
  }
  return assemblePdf([...objects, ...(opts.more ?? [])]);
}

/**
 * A compressed object stream holding an older version of object 2, the root: nothing in the cross-reference table
 * points into it (a writer that saved the tree as plain objects left it behind), so pdf.js reads the plain root,
 * while the repair, which finds objects by scanning the file, takes the later one, and appends its repair of it.
 */
function staleRoot(root: string): Buffer {
  const head = '2 0 ';
  const data = deflateSync(Buffer.from(head + root, 'latin1'));
  return Buffer.concat([Buffer.from(`<< /Type /ObjStm /N 1 /First ${head.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
}

async function upload(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<any> {
  const res = await uploadFiles(d, user.apiKey, [{ name, bytes }], { query: '?wait=true&wait_timeout=120' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.documents[0];
}

/** The page the text at `offset` of `chunk` is on, by where the chunk says each of its pages starts. */
function pageAt(chunk: any, offset: number): number {
  let on = chunk.page_start;
  for (const [at, p] of chunk.placement.page_starts) if (at <= offset) on = p;
  return on;
}

/** Expects LINES[i] on page `on[i]` of the document's chunks, and no line without a page there. */
async function expectLines(d: Daemon, user: TestUser, id: string, name: string, on: number[]): Promise<void> {
  const res = await api(d, `/api/v1/documents/${id}/text`, { token: user.apiKey });
  expect(res.status).toBe(200);
  const chunks = res.body.pages.flatMap((p: any) => p.chunks);
  LINES.forEach((line, i) => {
    // A line can open one chunk and close the one before (the overlap): it is on the same page in both.
    const pages = chunks.filter((c: any) => c.text.includes(line)).map((c: any) => pageAt(c, c.text.indexOf(line)));
    expect(pages, `${name}: "${line}"`).toEqual(on[i] === undefined ? [] : expect.arrayContaining([on[i]]));
    expect(new Set(pages).size, `${name}: "${line}" on one page`).toBeLessThanOrEqual(1);
  });
}

const LOOP_REPAIRED = 'its page tree loops back on itself: each page it lists was read once, in order';
const ENTRIES_REPAIRED = 'its page tree lists entries that are not pages: they were skipped and the pages after them read';
const COUNT_REPAIRED = 'its page tree miscounts its pages: every page it lists was read';

/** A file, what the API says of it once read, and the page each of LINES is on (none where a line is missing). */
interface Case {
  name: string;
  bytes: Buffer;
  pages: number;
  warnings: string[];
  on: number[];
}

const inner = (count: number, kids: string) => `<< /Type /Pages /Parent 2 0 R /Count ${count} /Kids [${kids}] >>`;
/** Three pages, `odd` listed between the first and the second. */
const oddKid = (odd: string) => `<< /Type /Pages /Count 3 /Kids [${page(0)} ${odd} ${page(1)} ${page(2)}] >>`;

// The loop is cut in the stale root the repair sees: the root pdf.js then reads lists no page (the repaired reading
// fails) or page 1 only (it reads fewer); the first reading had pages 1 and 2.
const KEPT: Case[] = [
  ['repair-fails.pdf', '<< /Type /Pages /Count 1 /Kids [2 0 R] >>', 'failed (the PDF has no pages)'],
  ['repair-reads-fewer.pdf', `<< /Type /Pages /Count 2 /Kids [${page(0)} 2 0 R] >>`, 'gave fewer pages (1 of 2)'],
].map(([name, stale, outcome]) => ({
  name: name!,
  bytes: pdf(`<< /Type /Pages /Count 3 /Kids [${page(0)} ${page(1)} 2 0 R] >>`, 2, { more: [staleRoot(stale!)] }),
  pages: 3,
  warnings: ['1 page could not be read and was skipped (page 3): its page tree loops back on itself', `its page tree loops back on itself: reading it repaired ${outcome}, so the pages read before are kept`],
  on: [1, 2],
}));

const COUNTS: Case[] = [
  ['root-count-small.pdf', pdf(`<< /Type /Pages /Count 2 /Kids [${page(0)} ${page(1)} ${page(2)} ${page(3)}] >>`, 4)] as const,
  // Two /Pages nodes (objects 12 and 13) of two pages each, the first saying 1 and the root their sum: pdf.js read
  // pages 1, 3 and 4.
  ['inner-count-small.pdf', pdf('<< /Type /Pages /Count 3 /Kids [12 0 R 13 0 R] >>', 4, { more: [inner(1, `${page(0)} ${page(1)}`), inner(2, `${page(2)} ${page(3)}`)] })] as const,
  // pdf.js finds the pages when the last it counts is not there.
  ['root-count-huge.pdf', pdf(`<< /Type /Pages /Count 999999999 /Kids [${page(0)} ${page(1)} ${page(2)} ${page(3)}] >>`, 4)] as const,
].map(([name, bytes]) => ({ name, bytes, pages: 4, warnings: [COUNT_REPAIRED], on: [1, 2, 3, 4] }));

const ODD_KIDS: Case[] = [
  ['kids-not-references.pdf', pdf(oddKid('42 null /Page (page 2) [5 0 R]'), 3)] as const,
  ['kid-missing.pdf', pdf(oddKid('99 0 R'), 3)] as const,
  ['kid-not-a-dictionary.pdf', pdf(oddKid('10 0 R'), 3, { more: ['[1 2 3]'] })] as const,
  // /Pages nodes (object 10) with /Kids null, /Kids 7, or none (pdf.js read that one as an empty page, and /Count 3
  // then lost page 3).
  ...['/Kids null', '/Kids 7', '/Count 0'].map((entry, i) => [`pages-node-without-kids-${i}.pdf`, pdf(oddKid('10 0 R'), 3, { more: [`<< /Type /Pages /Parent 2 0 R ${entry} >>`] })] as const),
].map(([name, bytes]) => ({ name, bytes, pages: 3, warnings: [ENTRIES_REPAIRED], on: [1, 2, 3] }));

const HIDDEN_LOOPS: Case[] = [
  // The root's /Kids is object 10; the loop went uncut (pages 2 and 3 were lost).
  { name: 'indirect-kids.pdf', bytes: pdf('<< /Type /Pages /Count 3 /Kids 10 0 R >>', 3, { more: [`[${page(0)} 2 0 R ${page(1)} ${page(2)}]`] }), pages: 3, warnings: [LOOP_REPAIRED], on: [1, 2, 3] },
  // An empty page written into the /Kids array: its /MediaBox's ']' ended the /Kids as the repair read it, so the
  // loop after it went uncut (page 3 was lost). The empty page is page 2, for OCR to find nothing on.
  {
    name: 'inline-page.pdf',
    bytes: pdf(`<< /Type /Pages /Count 3 /Kids [${page(0)} << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> 2 0 R ${page(1)}] >>`, 2),
    pages: 3,
    warnings: ['1 of 3 pages have no usable text layer (scanned?): page 2', LOOP_REPAIRED, 'OCR found no text on page 2'],
    on: [1, 3],
  },
];

describe('PDF page trees the repair meets', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  async function expectRead(c: Case): Promise<void> {
    const doc = await upload(d, alice, c.name, c.bytes);
    expect(doc, `${c.name}: ${doc.error}`).toMatchObject({ status: 'ready', content_type: 'application/pdf', pages: c.pages, error: null });
    expect(doc.warnings, c.name).toEqual(c.warnings);
    await expectLines(d, alice, doc.id, c.name, c.on);
  }

  it.each(KEPT)('keeps the pages the first reading got when the repaired reading fails or reads fewer: $name', expectRead, 60_000);

  it('fails a root that lists only itself with an error naming the loop (it said "Page index 0 not found.")', async () => {
    const doc = await upload(d, alice, 'only-a-loop.pdf', pdf('<< /Type /Pages /Count 1 /Kids [2 0 R] >>', 1));
    expect(doc).toMatchObject({ status: 'failed', pages: null, error: 'the PDF is damaged or truncated: its page tree loops back on itself' });
  }, 60_000);

  it('reads a page carrying a stray /Kids as a page, as pdf.js does (the repair walked into it: pages 2 and 3 were lost)', async () => {
    // Page 1 lists pages 2 and 3 as its kids; the root loops after page 1. The repair walked page 1's /Kids, took
    // pages 2 and 3 as listed there and blanked them in the root, where pdf.js reads them.
    const bytes = pdf(`<< /Type /Pages /Count 3 /Kids [${page(0)} 2 0 R ${page(1)} ${page(2)}] >>`, 3, { pageExtra: (i) => (i === 0 ? `/Kids [${page(1)} ${page(2)}] ` : '') });
    await expectRead({ name: 'page-with-kids.pdf', bytes, pages: 3, warnings: [LOOP_REPAIRED], on: [1, 2, 3] });
  }, 60_000);

  it.each(COUNTS)('reads every page when /Count says fewer or more (pdf.js skips subtrees by /Count: too small lost pages without a word): $name', expectRead, 60_000);

  it.each(ODD_KIDS)('skips /Kids entries that are not pages and reads the pages after them (pdf.js stopped at the first): $name', expectRead, 60_000);

  it.each(HIDDEN_LOOPS)('cuts a loop behind a /Kids stored as an object of its own, or after a page dictionary written into /Kids: $name', expectRead, 60_000);

  it('reads pages whose /Parent chain loops (pdf.js stops its inherited lookups)', async () => {
    // Root → node 10 → pages, the root's /Parent being node 10.
    const bytes = pdf('<< /Type /Pages /Count 3 /Parent 10 0 R /Kids [10 0 R] >>', 3, { more: [`<< /Type /Pages /Parent 2 0 R /Count 3 /Kids [${page(0)} ${page(1)} ${page(2)}] >>`] });
    await expectRead({ name: 'parent-cycle.pdf', bytes, pages: 3, warnings: [], on: [1, 2, 3] });
  }, 60_000);

  it.each(['<< /Type /Pages /Count 2 >>', '<< /Type /Pages /Count 2 /Kids null >>'])(
    'fails a root without a /Kids array in words (it said "Page dictionary kids object is not an array."): %s',
    async (root) => {
      const doc = await upload(d, alice, 'no-kids.pdf', pdf(root, 2));
      expect(doc).toMatchObject({ status: 'failed', pages: null, error: 'the PDF is damaged or truncated: its page tree has a /Pages node without a list of pages' });
    },
    60_000,
  );
});
