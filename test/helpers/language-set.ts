/**
 * The multilingual evaluation set (test/fixtures/languages/): documents a native reader would write in eight
 * languages, English look-alikes on the same topics, real Debian text in each language as distractors, and four
 * kinds of query per language. Loaded, uploaded and scored through a real daemon's API by the in-suite test
 * (test/search/languages.test.ts) and by `npm run bench:languages`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { api, type Daemon, REPO } from './daemon.js';
import { uploadFiles, type UploadFile } from '../ingest/pipeline/helpers.js';

export const LANGUAGE_SET = join(REPO, 'test/fixtures/languages');

export const QUERY_KINDS = ['exact', 'variant', 'paraphrase', 'cross'] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

export interface SetDocument {
  id: string;
  language: string;
  title: string;
  text: string;
}

export interface SetQuery {
  language: string;
  kind: QueryKind;
  q: string;
  /** The id of the document that answers it. */
  doc: string;
  /** Words of the sentence that answers it (paraphrase questions of some languages): the answer shown must hold them. */
  answer?: string;
}

export interface LanguageSet {
  documents: SetDocument[];
  queries: SetQuery[];
  /** Real Debian text, by language (distractors/<lang>/*.txt): file name and text. */
  distractors: { language: string; name: string; text: string }[];
}

export function loadLanguageSet(): LanguageSet {
  const documents: SetDocument[] = [];
  const queries: SetQuery[] = [];
  const dir = join(LANGUAGE_SET, 'set');
  for (const file of readdirSync(dir).sort()) {
    const y = parse(readFileSync(join(dir, file), 'utf8')) as { language: string; documents: Omit<SetDocument, 'language'>[]; queries?: Omit<SetQuery, 'language'>[] };
    for (const d of y.documents) documents.push({ ...d, language: y.language, text: d.text.trim() });
    for (const q of y.queries ?? []) queries.push({ ...q, q: String(q.q), language: y.language });
  }
  const distractors: LanguageSet['distractors'] = [];
  const dd = join(LANGUAGE_SET, 'distractors');
  for (const language of readdirSync(dd).sort()) {
    for (const name of readdirSync(join(dd, language)).sort()) distractors.push({ language, name: `${language}-${name}`, text: readFileSync(join(dd, language, name), 'utf8') });
  }
  return { documents, queries, distractors };
}

/** The set as files: each document a Markdown file named by its id, each distractor a text file. */
export function setFiles(set: LanguageSet): UploadFile[] {
  return [
    ...set.documents.map((d) => ({ name: `${d.id}.md`, bytes: Buffer.from(`# ${d.title}\n\n${d.text}\n`) })),
    ...set.distractors.map((d) => ({ name: d.name, bytes: Buffer.from(d.text) })),
  ];
}

/** Uploads the set into the caller's default project and waits until every document is ready; returns their ids by file name. */
export async function uploadLanguageSet(d: Daemon, token: string, set: LanguageSet, perRequest = 20): Promise<Map<string, string>> {
  const files = setFiles(set);
  const ids = new Map<string, string>();
  for (let i = 0; i < files.length; i += perRequest) {
    const res = await uploadFiles(d, token, files.slice(i, i + perRequest));
    if (res.status !== 202 && res.status !== 200) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
    for (const doc of res.body.documents as { id: string; filename: string }[]) ids.set(doc.filename, doc.id);
  }
  for (;;) {
    const open = async (status: string) => ((await api(d, `/api/v1/documents?limit=100&status=${status}`, { token })).body.documents as unknown[]).length;
    if ((await open('queued')) + (await open('processing')) === 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const failed = (await api(d, '/api/v1/documents?limit=100&status=failed', { token })).body.documents as { filename: string; error?: unknown }[];
  if (failed.length > 0) throw new Error(`documents of the set failed: ${JSON.stringify(failed)}`);
  return ids;
}

export interface QueryOutcome {
  query: SetQuery;
  /** 1-based rank of the answering document among the documents found, or null when it is not in the top 3. */
  rank: number | null;
  /** File names of the top documents. */
  top: string[];
  ms: number;
}

/** Runs each query (documents grouped, top 3) in `mode` and notes where its document ranks. */
export async function runSetQueries(d: Daemon, token: string, queries: SetQuery[], mode: 'keyword' | 'hybrid' | 'vector'): Promise<QueryOutcome[]> {
  const out: QueryOutcome[] = [];
  for (const query of queries) {
    const t0 = performance.now();
    const res = await api(d, '/api/v1/search', { token, body: { query: query.q, mode, group: 'document', limit: 3, passages_per_document: 1 } });
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`search "${query.q}" answered ${res.status}: ${JSON.stringify(res.body)}`);
    const top = (res.body.documents as { document: { filename: string } }[]).map((x) => x.document.filename);
    const at = top.indexOf(`${query.doc}.md`);
    out.push({ query, rank: at >= 0 ? at + 1 : null, top, ms });
  }
  return out;
}

export interface Tally {
  n: number;
  top1: number;
  top3: number;
}

/** Top-1 and top-3 counts by language and kind. */
export function tally(outcomes: QueryOutcome[]): Map<string, Map<QueryKind, Tally>> {
  const out = new Map<string, Map<QueryKind, Tally>>();
  for (const o of outcomes) {
    const byKind = out.get(o.query.language) ?? new Map<QueryKind, Tally>();
    out.set(o.query.language, byKind);
    const t = byKind.get(o.query.kind) ?? { n: 0, top1: 0, top3: 0 };
    byKind.set(o.query.kind, t);
    t.n++;
    if (o.rank === 1) t.top1++;
    if (o.rank !== null) t.top3++;
  }
  return out;
}
