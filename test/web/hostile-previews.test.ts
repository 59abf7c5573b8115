import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { cpuMsOf } from '../helpers/cpu-time.js';
import { memoryMiB, rssSampler } from '../helpers/rss-sampler.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makeHugeImagePdf, makeNestedFormsPdf, makePdf } from '../ingest/build-fixtures.js';

/**
 * Issue #44 items 12 and 13, through the daemon: one user asking for previews of a PDF declaring a 16000 × 16000
 * image and of a PDF of nested form XObjects, 17 requests at once, does not hold back another user's first thumbnail
 * (it is drawn before the nested forms run out of their 4 s) and keeps the daemon's memory under 1 GiB; overload is
 * an honest 503 with Retry-After.
 */

async function uploadPdf(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'application/pdf' }), name);
  const res = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
  expect(res.status).toBe(202);
  return ((await res.json()) as { documents: { id: string }[] }).documents[0]!.id;
}

describe('hostile previews', () => {
  let d: Daemon;
  let mallory: TestUser;
  let alice: TestUser;
  // OCR off: ingesting the uploads is not what is tested here, and OCR would spend its drawing budget (and its
  // thread's heap) on nested-forms.pdf's page while the previews are measured.
  daemonForSuite(
    async (started) => {
      d = started;
      mallory = await addUser(d);
      alice = await addUser(d);
    },
    { args: ['--ocr', 'off'] },
  );

  it("one user's hostile PDFs do not hold back another's first thumbnail, and leave the daemon under 1 GiB", async () => {
    const huge = await uploadPdf(d, mallory, 'huge-image.pdf', makeHugeImagePdf(16_000));
    const nested = await uploadPdf(d, mallory, 'nested-forms.pdf', makeNestedFormsPdf(24));
    const mine = await uploadPdf(d, alice, 'report.pdf', makePdf([[{ lines: ['Quarterly report', 'A plain first page.'] }]]));
    const pid = d.proc.pid!;
    const sampler = rssSampler(pid);
    const thumb = (user: TestUser, id: string) => fetch(`${d.url}/api/v1/documents/${id}/thumbnail`, { headers: { authorization: `Bearer ${user.apiKey}` } });
    try {
      // Both drawing threads started first (one per user at a time, so one user each): what is compared below is
      // the turn order, not how long a thread takes to load pdf.js on a busy machine.
      const warm = await Promise.all([
        thumb(alice, await uploadPdf(d, alice, 'warm-a.pdf', makePdf([[{ lines: ['Warm-up A'] }]]))),
        thumb(mallory, await uploadPdf(d, mallory, 'warm-m.pdf', makePdf([[{ lines: ['Warm-up M'] }]]))),
      ]);
      expect(warm.map((r) => r.status)).toEqual([200, 200]);
      let formsAnswered = 0;
      const flood = Array.from({ length: 17 }, (_, i) => (i % 2 ? thumb(mallory, huge) : thumb(mallory, nested).finally(() => formsAnswered++)));
      await new Promise((r) => setTimeout(r, 300));
      const t0 = performance.now();
      const res = await thumb(alice, mine);
      const ms = performance.now() - t0;
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/webp');
      // Alice did not wait behind mallory's renders: hers was drawn while the nested forms still held their thread
      // (they are given up after their 4 s budget; without the owners' turns she would be answered after them).
      expect(formsAnswered, 'nested-forms requests answered before alice').toBe(0);
      const answers = await Promise.all(flood);
      for (const a of answers) {
        const body = await a.text();
        // Refused (the image over the pixel budget; the forms over the time budget), or told to come back later.
        expect([404, 503], body).toContain(a.status);
        expect(a.headers.get('retry-after'), body).toBe(a.status === 503 ? '5' : null);
        expect(body).toMatch(a.status === 503 ? /try again in a few seconds/ : /^\{"error":/);
      }
      // Remembered: asking again is answered without drawing again (a draw spends its 4 s budget of CPU).
      const cpu = cpuMsOf(pid);
      expect((await thumb(mallory, nested)).status).toBe(404);
      expect(cpuMsOf(pid) - cpu, 'daemon CPU ms for the repeated ask').toBeLessThan(1000);
      const hwm = memoryMiB(pid, 'VmHWM');
      console.log(`alice's first thumbnail: ${Math.round(ms)} ms; daemon RSS peak sampled ${sampler.stop().peak} MiB, VmHWM ${hwm} MiB`);
      expect(hwm).toBeLessThan(1024);
      expect(d.stderr()).not.toMatch(/"level":50[^\n]*thumbnails/);
    } finally {
      sampler.stop();
    }
  }, 120_000);
});
