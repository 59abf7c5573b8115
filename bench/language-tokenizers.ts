/**
 * `npm run bench:languages -- --tokenizers`: keyword search on the evaluation set with LanceDB's own tokenizers
 * against the pre-analysed column docsearch indexes (docs/search.md#languages). Each document of the set and each
 * distractor is one row (no embedding: keyword search only); each configuration is an FTS index on one column of a
 * table in a temporary folder. Prints top-1 of the exact-word and word-variant queries per language, the index's
 * size and the CPU per query.
 */
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { analyseQuery, analyseText } from '../src/language/analyse.js';
import { detectLanguage, queryLanguages } from '../src/language/detect.js';
import { keywordIndex } from '../src/store/lancedb/chunk-schema.js';
import { keywordQuery } from '../src/search/terms.js';
import { removeDir } from '../test/helpers/daemon.js';
import { type LanguageSet, QUERY_KINDS } from '../test/helpers/language-set.js';

const dirSize = (dir: string): number => readdirSync(dir, { recursive: true, withFileTypes: true }).reduce((n, e) => n + (e.isFile() ? statSync(join(e.parentPath, e.name)).size : 0), 0);

interface Config {
  name: string;
  index: lancedb.Index;
  /** What the column holds for a row's text and language. */
  column: (text: string, language: string | null) => string;
  /** What a query is searched with, given the languages the library holds. */
  query: (q: string, library: readonly string[]) => Promise<string>;
}

export async function compareTokenizers(set: LanguageSet): Promise<string[]> {
  const rows = [
    ...set.documents.map((d) => ({ name: `${d.id}.md`, text: `${d.title}\n\n${d.text}` })),
    ...set.distractors.map((d) => ({ name: d.name, text: d.text })),
  ].map((r) => ({ ...r, language: detectLanguage(r.text) }));
  const library = [...new Set(rows.map((r) => r.language).filter((l): l is string => l !== null))];
  const plain = async (q: string) => keywordQuery(q);
  const configs: Config[] = [
    { name: 'LanceDB default (simple, English stemmer and stop words, ASCII folding): 0.2.0', index: lancedb.Index.fts(), column: (t) => t, query: plain },
    { name: 'LanceDB icu, lower case, ASCII folding, no stemming', index: lancedb.Index.fts({ baseTokenizer: 'icu', stem: false, removeStopWords: false }), column: (t) => t, query: plain },
    { name: 'LanceDB ngram (3-grams), lower case', index: lancedb.Index.fts({ baseTokenizer: 'ngram', ngramMinLength: 3, ngramMaxLength: 3, stem: false, removeStopWords: false, asciiFolding: false }), column: (t) => t, query: async (q) => q },
    {
      name: 'pre-analysed keyword_text (docsearch)',
      index: keywordIndex('keyword_text'),
      column: (t, l) => analyseText(t, l),
      query: async (q, held) => analyseQuery(q, (await queryLanguages(q, async () => held)).languages).text,
    },
  ];
  const queries = set.queries.filter((q) => q.kind === 'exact' || q.kind === 'variant');
  const languages = [...new Set(queries.map((q) => q.language))].sort();
  const lines = [`| configuration | ${languages.join(' | ')} | all | index KiB | CPU-ms/query |`, `|---|${languages.map(() => '---|').join('')}---|---|---|`];
  for (const c of configs) {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-tokenizers-'));
    try {
      const db = await lancedb.connect(dir);
      const table = await db.createTable('t', rows.map((r) => ({ name: r.name, text: c.column(r.text, r.language) })));
      await table.createIndex('text', { config: c.index });
      const size = dirSize(dir);
      const hits = new Map<string, number>();
      const c0 = process.cpuUsage();
      for (const q of queries) {
        const text = await c.query(q.q, library);
        const top = text.trim() ? ((await table.query().fullTextSearch(text, { columns: 'text' }).select(['name']).limit(1).toArray()) as { name: string }[]) : [];
        if (top[0]?.name === `${q.doc}.md`) hits.set(q.language, (hits.get(q.language) ?? 0) + 1);
      }
      const cpu = process.cpuUsage(c0);
      const pct = (l: string) => Math.round((100 * (hits.get(l) ?? 0)) / queries.filter((q) => q.language === l).length);
      const all = Math.round((100 * [...hits.values()].reduce((a, b) => a + b, 0)) / queries.length);
      lines.push(`| ${c.name} | ${languages.map(pct).join(' | ')} | ${all} | ${(size / 1024).toFixed(0)} | ${((cpu.user + cpu.system) / 1000 / queries.length).toFixed(2)} |`);
      db.close();
    } finally {
      removeDir(dir);
    }
  }
  lines.push('', `Top-1 (%) of the ${queries.length} exact-word and word-variant queries (${QUERY_KINDS.slice(0, 2).join(', ')}), keyword search alone, one row per document.`);
  return lines;
}
