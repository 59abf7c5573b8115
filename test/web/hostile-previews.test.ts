import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makeHugeImagePdf, makeNestedFormsPdf, makePdf } from '../ingest/build-fixtures.js';

/**
 * Issue #44 items 12 and 13, through the daemon: one user asking for previews of a PDF declaring a 16000 × 16000
 * image and of a PDF of nested form XObjects, 17 requests at once, leaves another user's first thumbnail under
 * 2 s and the daemon's memory under 1 GiB; overload is an honest 503 with Retry-After.
 */

async function uploadPdf(d: Daemon, user: TestUser, name: string, bytes: Buffer): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'application/pdf' }), name);
  const res = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
  expect(res.status).toBe(202);
  return ((await res.json()) as { documents: { id: string }[] }).documents[0]!.id;
}

const kb = (pid: number, field: 'VmRSS' | 'VmHWM'): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

describe('hostile previews', () => {
  let d: Daemon;
  let mallory: TestUser;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    mallory = await addUser(d);
    alice = await addUser(d);
  });

  it("one user's hostile PDFs leave another's first thumbnail under 2 s and the daemon under 1 GiB", async () => {
    const huge = await uploadPdf(d, mallory, 'huge-image.pdf', makeHugeImagePdf(16_000));
    const nested = await uploadPdf(d, mallory, 'nested-forms.pdf', makeNestedFormsPdf(24));
    const mine = await uploadPdf(d, alice, 'report.pdf', makePdf([[{ lines: ['Quarterly report', 'A plain first page.'] }]]));
    const pid = d.proc.pid!;
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, kb(pid, 'VmRSS'))), 50);
    const thumb = (user: TestUser, id: string) => fetch(`${d.url}/api/v1/documents/${id}/thumbnail`, { headers: { authorization: `Bearer ${user.apiKey}` } });
    try {
      const flood = Array.from({ length: 17 }, (_, i) => thumb(mallory, i % 2 ? huge : nested));
      await new Promise((r) => setTimeout(r, 300));
      const t0 = performance.now();
      const res = await thumb(alice, mine);
      const ms = performance.now() - t0;
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/webp');
      const answers = await Promise.all(flood);
      for (const a of answers) {
        const body = await a.text();
        // Refused (the image over the pixel budget; the forms over the time budget), or told to come back later.
        expect([404, 503], body).toContain(a.status);
        if (a.status === 503) {
          expect(a.headers.get('retry-after')).toBe('5');
          expect(body).toMatch(/try again in a few seconds/);
        }
      }
      // Remembered: asking again is answered at once.
      const t1 = performance.now();
      expect((await thumb(mallory, nested)).status).toBe(404);
      expect(performance.now() - t1).toBeLessThan(500);
      const hwm = kb(pid, 'VmHWM');
      console.log(`alice's first thumbnail: ${Math.round(ms)} ms; daemon RSS peak sampled ${Math.round(peak / 1024)} MiB, VmHWM ${Math.round(hwm / 1024)} MiB`);
      expect(ms).toBeLessThan(2000);
      expect(hwm).toBeLessThan(1024 * 1024);
      expect(d.stderr()).not.toMatch(/"level":50[^\n]*thumbnails/);
    } finally {
      clearInterval(sampler);
    }
  }, 120_000);
});
