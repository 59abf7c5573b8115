/**
 * A hostile scan through the real daemon: a page of 2^24 nested form XObjects (no text layer, so OCR draws it) is
 * given up when its drawing runs over its own budget, of time or of the OCR thread's heap, with a warning naming the
 * page, instead of holding an OCR lane for the page's whole 120 s limit and taking the daemon to ~1.06 GB while
 * pdf.js builds its operator list (measured before the budget: 48–120 s, VmHWM 1 048–1 060 MB, the page failing at
 * the page limit or as "out of memory"; with it: 8–12 s, 620–680 MB).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeNestedFormsPdf, scannedPage } from '../build-fixtures.js';
import { cpuMsOf } from '../../helpers/cpu-time.js';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { memoryMiB } from '../../helpers/rss-sampler.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles, waitFor } from './helpers.js';

describe('OCR of a page that cannot be drawn in reason', () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  it('skips the page with a warning once its drawing is over budget, in far less than the page limit and memory, and reads the next page', async () => {
    // Page 2 is page 2 of scan-300dpi.pdf (its truth: scan-300dpi.truth.txt), after the hostile page 1.
    const pdf = makeNestedFormsPdf(24, scannedPage(readFileSync(join(REPO, 'test/fixtures/ocr/scan-300dpi.pdf')), 2));
    const pid = d.proc.pid!;
    const cpu = cpuMsOf(pid);
    const res = await uploadFiles(d, alice.apiKey, [{ name: 'nested-forms.pdf', bytes: pdf }]);
    expect(res.status).toBe(202);
    const id = res.body.documents[0].id as string;
    const doc = await waitFor(async () => {
      const r = await api(d, `/api/v1/documents/${id}`, { token: alice.apiKey });
      return ['ready', 'failed'].includes(r.body.status) && r.body;
    }, 200_000, 'nested-forms.pdf to be processed');
    const spent = cpuMsOf(pid) - cpu;
    const hwm = memoryMiB(pid, 'VmHWM');
    const ingested = JSON.parse(await d.logLine((l) => l.includes('"event":"document.ingested"') && l.includes(id))) as { ocr_ms: number };
    console.log(`nested forms: OCR ${ingested.ocr_ms} ms, daemon CPU ${spent} ms, VmHWM ${hwm} MiB`);
    // The document is still read (ready, not failed); only page 1 is skipped, saying why, and page 2 is read.
    expect(doc).toMatchObject({ status: 'ready', pages: 2, error: null });
    expect(doc.warnings).toEqual([
      expect.stringMatching(/^OCR: page 2 \(eng\), mean confidence \d{2,3} %$/),
      expect.stringMatching(/^OCR failed on page 1: drawing the page (took longer than its budget of [\d.]+ s|ran out of memory \(the OCR thread's limit of \d+ MB\)): skipped$/),
    ]);
    const search = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'clockmaker mended pocket watches at the inn', limit: 3 } });
    expect(search.status).toBe(200);
    expect(search.body.results[0]).toMatchObject({ document: { id }, ocr: true, page_start: 2, page_end: 2 });
    expect(search.body.results[0].text).toContain('A travelling clockmaker stayed at the inn for a fortnight');
    // Before the budget the page's 120 s limit or the 512 MB heap ended it (48–120 s, ~1.05 GB); with it 8–12 s and
    // 620–680 MB, and at most 4× its 6.2 s budget in wall time on a loaded machine.
    expect(ingested.ocr_ms).toBeLessThan(80_000);
    expect(spent, 'daemon CPU ms while the page was drawn').toBeLessThan(60_000);
    expect(hwm, 'daemon VmHWM MiB').toBeLessThan(880);
  }, 240_000);
});
