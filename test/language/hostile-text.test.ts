/**
 * Text in every language as hostile input, through a real daemon (built binary, built-in model): a long run of kana
 * without spaces or punctuation (the model's tokenizer reads it as one unknown word; ingest cuts it into chunks by its
 * characters, test/ingest/chunk-hostile-runs.test.ts) is analysed and searched within bounded memory; highlights never split a grapheme (a Thai consonant from
 * its vowel, a letter from its accent); the excerpt the CLI and the web page show is cut between graphemes (a family
 * emoji, a Devanagari conjunct whole). Text generated here, from the evaluation set's Japanese distractors.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { call, httpClient } from '../mcp/mcp-client.js';
import { addUser, api, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { rssSampler } from '../helpers/rss-sampler.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { storedChunks, uploadFiles } from '../ingest/pipeline/helpers.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn } from '../web/library-client.js';

/** `n` kana drawn (seeded) from the kana of Debian's Japanese manual pages: one run, no space, no punctuation. */
function kanaRun(n: number): string {
  const dir = join(REPO, 'test/fixtures/languages/distractors/ja');
  const text = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('');
  const kana = [...new Set(text.match(/[\p{Script=Hiragana}\p{Script=Katakana}]/gu))].sort();
  let seed = 168;
  let out = '';
  for (let i = 0; i < n; i++) out += kana[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % kana.length];
  return out;
}

const KANA = kanaRun(40_000);
/** 200,000 letters without a space in a document set to German: no word, and once all the daemon's heap. */
const GERMAN_RUN = 'donaudampfschifffahrtsgesellschaft'.repeat(6000);
/** Paragraphs of Thai, each an answer unit of its own: a term's ranges outside the answer are seen. */
const THAI = [
  'สวัสดีครับ ยินดีต้อนรับสู่ห้องสมุดของเรา ห้องสมุดเปิดทุกวันตั้งแต่เช้าจนถึงเย็น',
  'ภาษาไทยเป็นภาษาที่สวยงาม ผู้คนสวมเสื้อสวยงามในวันสงกรานต์ และเล่นน้ำกันอย่างสนุกสนาน',
  'การยืมหนังสือต้องใช้บัตรสมาชิก สมาชิกยืมหนังสือได้ครั้งละห้าเล่ม เป็นเวลาสองสัปดาห์',
].join('\n\n');
/**
 * A sentence (the answer to "emoji list"), then a run without spaces that the excerpt's 320 characters end inside
 * (the run under an answer unit's 400): families of four, each 11 UTF-16 units, the 320th unit inside the second
 * person (a cut at a code point keeps the first and a joiner).
 */
const FAMILY = '👨‍👩‍👧‍👦';
const FAMILIES = `The family emoji below are listed here for a test of excerpts. ${FAMILY.repeat(33)}`;
/** The same with a Sanskrit compound, the 320th unit its virama (्), which a cut at a code point leaves out. */
const RUN = 'क्षत्रियश्रीमान्द्वितीय'.repeat(15);
const SANSKRIT = `The Sanskrit words below are listed here as a test of excerpt. ${RUN}`;

/**
 * One chunk over MCP's 2,000 characters a passage (the run is one unknown word to the tokenizer), its 2,000th unit a
 * Thai vowel sign (็): a cut at a code point leaves its consonant without it.
 */
const THAI_RUN = `A Thai text sample: ${'ภาษาไทยเป็นภาษาที่สวยงามมาก'.repeat(100)}`;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** The offsets of `text` that lie between graphemes. */
const boundaries = (text: string) => new Set([...[...graphemes.segment(text)].map((g) => g.index), text.length]);

type Hit = { text: string; snippet: string; highlights: [number, number][]; document: { filename: string } };

describe('hostile text in every language', () => {
  let d: Daemon;
  let user: TestUser;
  let web: WebClient;
  const ids: Record<string, string> = {};
  let kanaMemory = { before: 0, peak: 0 };
  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
      web = await loggedIn(d, user);
      const upload = async (name: string, text: string, fields?: Record<string, string>) => {
        const res = await uploadFiles(d, user.apiKey, [{ name, bytes: Buffer.from(text) }], { fields });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        ids[name] = res.body.documents[0].id as string;
      };
      await upload('thai.txt', THAI);
      await upload('families.txt', FAMILIES);
      await upload('sanskrit.txt', SANSKRIT);
      await upload('thai-run.txt', THAI_RUN);
      await waitFor(async () => (await api(d, '/api/v1/documents?limit=100', { token: user.apiKey })).body.documents.every((x: { status: string }) => x.status === 'ready'), 120_000, 'documents ready');
      const rss = rssSampler(d.proc.pid!);
      await upload('kana.txt', KANA);
      await upload('letters.txt', `Ein Wort ohne Ende: ${GERMAN_RUN}`, { language: 'de' });
      for (const name of ['kana.txt', 'letters.txt']) {
        await waitFor(async () => (await api(d, `/api/v1/documents/${ids[name]}`, { token: user.apiKey })).body.status === 'ready', 300_000, `${name} ready`);
      }
      // A search that shows it, highlights and answer read from its whole text, and a query of the longest length.
      for (const query of [KANA.slice(20_000, 20_012), KANA.slice(0, 2000)]) {
        const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query, mode: 'keyword', limit: 5 } });
        expect(res.status).toBe(200);
        expect((res.body.results as Hit[]).map((r) => r.document.filename)).toContain('kana.txt');
      }
      const words = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'Wort ohne Ende', mode: 'keyword', limit: 5 } });
      expect((words.body.results as Hit[]).map((r) => r.document.filename)).toContain('letters.txt');
      kanaMemory = rss.stop();
    },
    { setupTimeoutMs: 600_000 },
  );

  it('analyses and searches a 40,000-character run of kana and a 200,000-letter "word" within bounded memory', async () => {
    const { rows } = await storedChunks(d.dataDir, ids['kana.txt']!);
    // The tokenizer reads the run as one word: its chunks are cut by their characters (at most 12 a token of the
    // model's 256), and ICU segments each of them; all of the run is stored.
    expect(Math.max(...rows.map((r) => r.text.length))).toBeLessThanOrEqual(256 * 12);
    expect(rows.reduce((n, r) => n + r.text.length, 0)).toBeGreaterThanOrEqual(KANA.length);
    // Before: V8's segmenter copied the run into each of its ~20,000 words, over 1.5 GB (a million kana: out of heap);
    // German compound splitting of the letters took minutes and gigabytes (340,000: out of heap).
    expect(kanaMemory.peak - kanaMemory.before, JSON.stringify(kanaMemory)).toBeLessThan(500);
  });

  it('never splits a grapheme in a highlight: a Thai vowel stays with its consonant, a term inside a run takes it', async () => {
    for (const query of ['สว', 'สวย', 'ภาษาท']) {
      const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query, mode: 'hybrid', limit: 10 } });
      expect(res.status).toBe(200);
      const hit = (res.body.results as Hit[]).find((r) => r.document.filename === 'thai.txt');
      expect(hit, `${query}: ${JSON.stringify((res.body.results as (Hit & { score: number })[]).map((r) => [r.document.filename, r.score, r.text.length]))}`).toBeDefined();
      const between = boundaries(hit!.text);
      const marked = hit!.highlights.map(([s, e]) => hit!.text.slice(s, e)).filter((t) => t !== hit!.snippet);
      expect(marked.length, query).toBeGreaterThan(0);
      for (const [s, e] of hit!.highlights) expect([between.has(s), between.has(e)], `${query}: ${hit!.text.slice(s, e)}`).toEqual([true, true]);
    }
  });

  /** What is left of `shown` once every whole family is taken out: none of their people, no joiner. */
  const brokenFamilies = (shown: string) => shown.replaceAll(FAMILY, '').match(/[👨👩👧👦\u200d]/gu) ?? [];
  /**
   * The part of RUN an output shows before its "…", and whether it ends between graphemes. The CLI breaks the run over
   * lines of the terminal's width (it has no space): the breaks and their indent are taken out again.
   */
  const shownRun = (out: string) => {
    const joined = out.replace(/(?<=[\p{Script=Devanagari}\p{M}])\s+(?=[\p{Script=Devanagari}\p{M}])/gu, '');
    const shown = /([\p{Script=Devanagari}\p{M}]+)\s+…/u.exec(joined)?.[1] ?? '';
    expect(RUN.startsWith(shown) && shown.length > 200, shown).toBe(true);
    return { shown, whole: boundaries(RUN).has(shown.length) };
  };

  it("cuts the CLI's excerpt between graphemes: whole families, whole conjuncts", async () => {
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const families = await runCli(['search', 'emoji list', '--mode', 'keyword', '--passages', '--document', ids['families.txt']!], { env });
    expect(families.code, families.stderr).toBe(0);
    
    expect(families.stdout).toContain(`${FAMILY} …`);
    expect(brokenFamilies(families.stdout)).toEqual([]);
    const sanskrit = await runCli(['search', 'Sanskrit words', '--mode', 'keyword', '--passages', '--document', ids['sanskrit.txt']!], { env });
    expect(sanskrit.code, sanskrit.stderr).toBe(0);
    // The excerpt ends after a letter with its signs, never before its virama or vowel sign.
    expect(shownRun(sanskrit.stdout)).toMatchObject({ whole: true, shown: expect.stringMatching(/^क्ष/u) });
  });

  it("cuts the web page's excerpt between graphemes", async () => {
    const page = await web.get(`/search?q=${encodeURIComponent('emoji list')}&mode=keyword&view=passages`);
    expect(page.status).toBe(200);
    const snippet = /<p class="snippet"[^>]*>([\s\S]*?)<\/p>/.exec(page.text)?.[1]?.replace(/<[^>]+>/g, '') ?? '';
    expect(snippet).toContain(FAMILY);
    expect(brokenFamilies(snippet)).toEqual([]);
    const sanskrit = await web.get(`/search?q=${encodeURIComponent('Sanskrit words')}&mode=keyword&view=passages`);
    const text = /<p class="snippet"[^>]*>([\s\S]*?)<\/p>/.exec(sanskrit.text)?.[1]?.replace(/<[^>]+>/g, '') ?? '';
    expect(shownRun(text)).toMatchObject({ whole: true });
  });

  it("cuts MCP's passage at 2,000 characters between graphemes, its highlights inside it", async () => {
    const mcp = await httpClient(d, user.apiKey);
    try {
      const out = await call(mcp, 'search', { query: 'Thai text sample ภาษาท', mode: 'keyword', limit: 5 });
      const passage = (out.results as { filename: string; text: string; snippet: string; text_cut?: boolean; highlights: [number, number][] }[]).find((r) => r.filename === 'thai-run.txt');
      expect(passage?.text_cut).toBe(true);
      expect(THAI_RUN.startsWith(passage!.text)).toBe(true);
      const between = boundaries(THAI_RUN);
      expect(passage!.text.length).toBeGreaterThan(1990);
      expect(between.has(passage!.text.length), `cut at ${passage!.text.length}`).toBe(true);
      // The terms' ranges, and the answer's: its unit, a part of the run that ingest cut between graphemes.
      const terms = passage!.highlights.filter(([s, e]) => passage!.text.slice(s, e) !== passage!.snippet);
      expect(terms.length).toBeGreaterThan(0);
      for (const [s, e] of passage!.highlights) expect([between.has(s), between.has(e)], `${s}-${e}`).toEqual([true, true]);
      const at = passage!.text.indexOf(passage!.snippet);
      expect([between.has(at), between.has(at + passage!.snippet.length)], passage!.snippet).toEqual([true, true]);
    } finally {
      await mcp.close();
    }
  });
});
