/**
 * Keyword and hybrid search in eight languages through a real daemon (built binary, built-in model), on the project's
 * evaluation set (test/fixtures/languages/, test/helpers/language-set.ts): its 92 documents among real Debian text
 * in each language (six pages each, cut short to keep the run lean), the queries a native reader would type.
 * The full set with every distractor and the English questions is `npm run bench:languages` (docs/BENCHMARKS.md).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../helpers/daemon.js';
import { loadLanguageSet, type QueryOutcome, runSetQueries, uploadLanguageSet } from '../helpers/language-set.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

const full = loadLanguageSet();
const DISTRACTORS_PER_LANGUAGE = 6;
const set = {
  ...full,
  distractors: [...new Set(full.distractors.map((d) => d.language))].flatMap((l) =>
    full.distractors
      .filter((d) => d.language === l)
      .slice(0, DISTRACTORS_PER_LANGUAGE)
      .map((d) => ({ ...d, text: d.text.slice(0, 1200) })),
  ),
};
const languages = [...new Set(set.queries.map((q) => q.language))].sort();

function shareFirst(outcomes: QueryOutcome[]): { share: number; misses: string[] } {
  const misses = outcomes.filter((o) => o.rank !== 1).map((o) => `"${o.query.q}" → ${o.query.doc}: got ${o.top.join(', ') || 'nothing'}`);
  return { share: 1 - misses.length / outcomes.length, misses };
}

describe('search in every language', () => {
  let d: Daemon;
  let token: string;
  daemonForSuite(
    async (started) => {
      d = started;
      token = (await addUser(d)).apiKey;
      await uploadLanguageSet(d, token, set);
    },
    { setupTimeoutMs: 600_000 },
  );

  it('keyword mode finds the right document first for ≥ 95 % of exact-word and word-variant queries in every language', async () => {
    const outcomes = await runSetQueries(
      d,
      token,
      set.queries.filter((q) => q.kind === 'exact' || q.kind === 'variant'),
      'keyword',
    );
    for (const language of languages) {
      const { share, misses } = shareFirst(outcomes.filter((o) => o.query.language === language));
      expect(share, `${language}: ${misses.join('; ')}`).toBeGreaterThanOrEqual(0.95);
    }
  });

  it('hybrid mode finds it first for ≥ 90 % of the questions in the document\'s own language', async () => {
    const outcomes = await runSetQueries(
      d,
      token,
      set.queries.filter((q) => q.kind === 'paraphrase'),
      'hybrid',
    );
    const { share, misses } = shareFirst(outcomes);
    expect(share, misses.join('; ')).toBeGreaterThanOrEqual(0.9);
  });

  it('shows the sentence that answers a German, Russian, Chinese or Japanese question as the answer', async () => {
    /** The answer shown for `q` in its document's result (hybrid, top 5), or null when the document is not found. */
    const shown = async (q: string, doc: string): Promise<string | null> => {
      const res = await api(d, '/api/v1/search', { token, body: { query: q, mode: 'hybrid', limit: 5 } });
      return (res.body.results as { document: { filename: string }; snippet: string }[]).find((r) => r.document.filename === `${doc}.md`)?.snippet ?? null;
    };
    // Questions in the words of their answer, inflected or segmented otherwise: English stems found 6 of 12 (no
    // Chinese or Japanese one: the question was one "word").
    const worded: [string, string, string][] = [
      ['de-library', 'Um wie viele Wochen kann man die Leihfrist verlängern?', 'Leihfrist'],
      ['de-homeoffice', 'Welche Pauschale zahlt das Unternehmen für den häuslichen Arbeitsplatz?', 'Pauschale von 300 Euro'],
      ['de-sick', 'Wann muss ich eine ärztliche Bescheinigung vorlegen?', 'spätestens am vierten Tag'],
      ['ru-pass', 'Сколько стоит восстановление пропуска?', 'пятьсот рублей'],
      ['ru-kitchen', 'Когда освобождают холодильник от продуктов?', 'Каждую пятницу'],
      ['ru-library', 'Кто возмещает стоимость утерянной книги?', 'возмещает её стоимость'],
      ['zh-library', '图书馆的开放时间是什么？', '开放时间为周一至周五'],
      ['zh-password', '密码多长时间更换一次？', '每九十天'],
      ['zh-visitor', '访客证离开时交给谁？', '交还前台'],
      ['ja-library', '延長の手続きはいつまでにしますか？', '返却期限の前日まで'],
      ['ja-earthquake', '避難場所はどこですか？', '中央公園'],
      ['ja-expenses', '経費精算システムでいつまでに申請しますか？', '翌月五日まで'],
    ];
    for (const [doc, q, answer] of worded) expect(await shown(q, doc), q).toContain(answer);
    // The set's questions in other words (paraphrase, with `answer`): only meaning bridges most of them, and the
    // built-in model reads English. Measured: 23 of 40 shown right (12 with English stems and the model’s meaning).
    const asked = set.queries.filter((q) => q.answer !== undefined && ['de', 'ru', 'zh', 'ja'].includes(q.language));
    expect(asked.length).toBe(40);
    // A question whose document is not among the top five counts as not shown.
    const wrong: string[] = [];
    for (const q of asked) {
      const snippet = await shown(q.q, q.doc);
      if (snippet === null) wrong.push(`${q.q} → ${q.doc} not in the top 5`);
      else if (!snippet.includes(q.answer!)) wrong.push(`${q.q} → "${snippet}" (not "${q.answer}")`);
    }
    expect(asked.length - wrong.length, wrong.join('\n')).toBeGreaterThanOrEqual(20);
  });

  it('finds 图书馆, 借阅 and 十九天 in the Chinese document, and marks them', async () => {
    for (const q of ['图书馆', '借阅', '十九天']) {
      const res = await api(d, '/api/v1/search', { token, body: { query: q, mode: 'keyword', limit: 1 } });
      const [top] = res.body.results;
      expect(top?.document.filename, q).toBe('zh-library.md');
      expect(top.highlights.map(([s, e]: [number, number]) => top.text.slice(s, e)).join('|'), q).toContain(q);
    }
  });

  it('finds Fahrrädern and Fahrradfahrer for "Fahrrad", Bücher for "Buecher", a Russian noun in its other cases, and marks each', async () => {
    /** Finds `query` in keyword mode: its top result is `filename`, and each of `words` in it lies in a highlight. */
    const marked = async (query: string, filename: string, words: string[]) => {
      const res = await api(d, '/api/v1/search', { token, body: { query, mode: 'keyword', limit: 1 } });
      const [top] = res.body.results;
      expect(top?.document.filename, query).toBe(filename);
      const ranges = top.highlights as [number, number][];
      for (const word of words) {
        const at = (top.text as string).indexOf(word);
        expect(at, `${word} in the text`).toBeGreaterThanOrEqual(0);
        expect(
          ranges.some(([s, e]) => s <= at && at + word.length <= e),
          `${query}: ${word} highlighted`,
        ).toBe(true);
      }
    };
    await marked('Fahrrad', 'de-bicycle.md', ['Fahrrädern', 'Fahrradfahrer']);
    await marked('Buecher', 'de-library.md', ['Bücher']);
    // The document says библиотеки, библиотекой, библиотекарю; книги, книгу: never the nominative.
    await marked('библиотека', 'ru-library.md', ['библиотеки']);
    await marked('книга', 'ru-library.md', ['Книги']);
  });
});
