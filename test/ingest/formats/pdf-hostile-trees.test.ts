/**
 * PDFs whose page tree is built to break the reader, through the real upload API of a daemon (dist/), generated
 * here (a few MB at most, so none is committed): a looping /Kids of 600,000 entries and a looping tree 20,000 levels
 * deep are read (the cut of the loop spread the /Kids into one call: past about 500,000, the parse worker's stack
 * limit, a RangeError failed the document), and a page carrying a /Kids is read as one page, as pdf.js reads it
 * (pdf-repair-branches.test.ts has the readings of a repair that fails or reads fewer pages).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from '../pipeline/helpers.js';
import { assemblePdf } from '../build-fixtures.js';

const FIRST = 'The harbour pilot boards every tanker at dawn near the outer buoy.';
const SECOND = 'Tugboats wait at the breakwater for the evening tide to turn.';

/**
 * Two pages of one line each (objects 5 and 7), under the root /Pages node `root` (object 2), with `more` as
 * objects 8 and on.
 */
function twoPages(root: string, opts: { firstPage?: string; more?: string[] } = {}): Buffer {
  const content = (line: string) => {
    const ops = `BT /F1 12 Tf 72 700 Td (${line}) Tj ET\n`;
    return `<< /Length ${ops.length} >>\nstream\n${ops}endstream`;
  };
  const page = (contents: number, extra = '') => `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contents} 0 R ${extra}>>`;
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    root,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    content(FIRST),
    page(4, opts.firstPage),
    content(SECOND),
    page(6),
    ...(opts.more ?? []),
  ]);
}

async function upload(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<any> {
  const res = await uploadFiles(d, user.apiKey, [{ name, bytes }], { query: '?wait=true&wait_timeout=120' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.documents[0];
}

/** Expects the document's chunks to hold `FIRST` on page 1 and `SECOND` on page 2. */
async function expectBothPages(d: Daemon, user: TestUser, id: string, name: string): Promise<void> {
  const res = await api(d, `/api/v1/documents/${id}/text`, { token: user.apiKey });
  expect(res.status).toBe(200);
  const chunks = res.body.pages.flatMap((p: any) => p.chunks);
  for (const [page, words] of [[1, FIRST], [2, SECOND]] as const) {
    const found = chunks.filter((c: any) => c.text.includes(words));
    expect(found.length, `${name}: "${words}"`).toBeGreaterThan(0);
    for (const c of found) expect([c.page_start, c.page_end], `${name}: "${words}"`).toSatisfy(([a, b]: number[]) => a! <= page && page <= b!);
  }
}

describe('PDF page trees built to break the reader', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
    },
    // Reading 600,000 kids takes seconds; a loaded machine must not turn that into a timeout.
    { args: ['--parse-timeout', '60'] },
  );

  it('reads a looping page tree whose /Kids lists a page 600,000 times, or that is 20,000 levels deep (a RangeError failed it)', async () => {
    const depth = 20_000;
    const chain = Array.from({ length: depth }, (_, i) =>
      i === depth - 1 ? '<< /Type /Pages /Count 2 /Kids [5 0 R 2 0 R 7 0 R] >>' : `<< /Type /Pages /Count 2 /Kids [${9 + i} 0 R] >>`,
    );
    const files: Record<string, Buffer> = {
      // The root lists itself after page 1, then page 1 again 600,000 times: more than one call takes as arguments.
      'wide-loop.pdf': twoPages(`<< /Type /Pages /Count 2 /Kids [5 0 R 2 0 R 7 0 R ${'5 0 R '.repeat(600_000)}] >>`),
      // 20,000 /Pages nodes each holding the next, the last holding the pages and the root.
      'deep-loop.pdf': twoPages('<< /Type /Pages /Count 2 /Kids [8 0 R] >>', { more: chain }),
    };
    for (const [name, bytes] of Object.entries(files)) {
      const doc = await upload(d, alice, name, bytes);
      expect(doc, `${name}: ${doc.error}`).toMatchObject({ status: 'ready', content_type: 'application/pdf', pages: 2, error: null });
      expect(doc.warnings, name).toEqual(['its page tree loops back on itself: each page it lists was read once, in order']);
      await expectBothPages(d, alice, doc.id, name);
    }
  }, 120_000);

  it('reads a page that also carries a /Kids as one page, as pdf.js does (the cut walked into it and dropped page 2)', async () => {
    // Page 1 also carries a /Kids naming page 2: pdf.js reads page 1 as a page (a leaf), the cut walked into its
    // /Kids, took page 2 as listed there and blanked it in the root, so the cut file had page 1 only.
    const bytes = twoPages('<< /Type /Pages /Count 3 /Kids [5 0 R 7 0 R 2 0 R] >>', { firstPage: '/Kids [7 0 R] ' });
    const doc = await upload(d, alice, 'page-with-kids.pdf', bytes);
    expect(doc, doc.error).toMatchObject({ status: 'ready', content_type: 'application/pdf', pages: 2, error: null });
    expect(doc.warnings).toEqual([
      'its page tree loops back on itself: each page it lists was read once, in order',
      'its page tree miscounts its pages: every page it lists was read',
    ]);
    await expectBothPages(d, alice, doc.id, 'page-with-kids.pdf');
  }, 120_000);
});
