/**
 * Search answers about PDFs hold the answer's words unbroken, on the right page: a justified pdfLaTeX file, a
 * two-column pdfLaTeX file and a Ghostscript-made (groff → PostScript → ps2pdf) file of the same known text
 * (test/fixtures/extract), each uploaded by its own user to a real daemon (built binary, built-in model).
 * The pages are where pdftotext finds the sentences in these committed files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasBrokenWord, tokens, vocabulary } from '../../../bench/extract-score.js';
import { addUser, api, type Daemon, REPO, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { uploadFiles } from './helpers.js';

const FIXTURES = join(REPO, 'test/fixtures/extract');
const vocab = vocabulary(tokens(readFileSync(join(FIXTURES, 'truth.txt'), 'utf8')));

const FILES = [
  { file: 'latex-1col.pdf', kind: 'justified', pages: { masks: 2, behalf: 4 } },
  { file: 'latex-2col.pdf', kind: 'two-column', pages: { masks: 1, behalf: 3 } },
  { file: 'groff-ps2pdf.pdf', kind: 'Ghostscript-made', pages: { masks: 1, behalf: 2 } },
];

const QUESTIONS = [
  { key: 'masks', query: 'which laws cover semiconductor masks', answer: /copyright-like laws that apply to other kinds of works, such as semiconductor masks/ },
  { key: 'behalf', query: 'may others make modifications exclusively for me', answer: /for the sole purpose of having them make modifications exclusively for you/ },
] as const;

describe('search answers from PDFs', () => {
  let d: Daemon;
  const users: TestUser[] = [];
  daemonForSuite(async (started) => {
    d = started;
    for (const { file } of FILES) {
      const user = await addUser(d);
      users.push(user);
      const res = await uploadFiles(d, user.apiKey, [{ name: file, bytes: readFileSync(join(FIXTURES, file)) }], { query: '?wait=true' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.documents[0].status, JSON.stringify(res.body)).toBe('ready');
    }
  }, { timeoutMs: 60_000, setupTimeoutMs: 240_000, cleanExit: false });

  for (const [i, { file, kind, pages }] of FILES.entries()) {
    for (const q of QUESTIONS) {
      it(`${kind} (${file}): "${q.query}" → the sentence, unbroken, page ${pages[q.key]}`, async () => {
        const res = await api(d, '/api/v1/search', { token: users[i]!.apiKey, body: { query: q.query, limit: 5 } });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const hit = (res.body.results as { text: string; page_start: number; page_end: number }[]).find((r) => q.answer.test(r.text.replace(/\s+/g, ' ')));
        expect(hit, JSON.stringify(res.body.results.map((r: { text: string }) => r.text.slice(0, 120)))).toBeDefined();
        expect(hasBrokenWord(hit!.text, vocab), hit!.text).toBe(false);
        expect(hit!.page_start).toBeLessThanOrEqual(pages[q.key]);
        expect(hit!.page_end).toBeGreaterThanOrEqual(pages[q.key]);
      });
    }
  }
});
