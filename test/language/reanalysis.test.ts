/**
 * A library written by an earlier analysis is analysed again in the background where today's reads its text
 * otherwise (language-backfill.ts `REANALYSED`), through a real daemon; every other row is left as it was written.
 * The earlier state is written underneath the stopped daemon: rows as that analysis wrote them, the index info saying
 * its version.
 *
 * - Analysis 1: Polish chunks labelled English and stemmed as English (detection then had no Polish function words)
 *   become Polish, their document too, and a Polish question finds them by their Polish forms; a chunk of a document
 *   set to English keeps English.
 * - Analysis 2: chunks with a word written joined (e-mail) or accented (résumé) are read again, and "email" and
 *   "resume" find them; Afrikaans chunks analysis 1 labelled English (analysis 2 left them) become Afrikaans.
 * - Analysis 3: chunks with C++ or Ph.D. are read again, and "C++" and "PhD" find them; one with e-mail (which
 *   analysis 3 read as today) is left.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ANALYSIS_VERSION, analyseText } from '../../src/language/analyse.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { addUser, api, type Daemon, REPO, removeDir, startDaemon, untilHealth } from '../helpers/daemon.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const polish = readFileSync(join(REPO, 'test/fixtures/language-detection/pl-apropos.txt'));
const english = Buffer.from('The harbour master keeps the tide tables for the estuary and posts them at the lock gate every Monday morning.');

const EMBEDDER = { embedderId: 'builtin:all-MiniLM-L6-v2-int8' };
type Row = Record<string, unknown>;
interface Analysed {
  language: unknown;
  keyword_text: unknown;
  keyword_analysis: number | null;
}

/** Every chunk row of a stopped daemon's library, with its text as searched and its analysis. */
async function storedRows(dataDir: string): Promise<Row[]> {
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const index = await ChunkIndex.open(store, EMBEDDER);
  try {
    return await index.rowsWhere('true', ['id', 'document_id', 'search_text', 'language', 'keyword_text', 'keyword_analysis'], 10_000);
  } finally {
    await index.close();
    store.close();
  }
}

/** Writes each row's analysis as `earlier` says an earlier analysis wrote it; returns what it wrote, by row id. */
async function rewriteRows(dataDir: string, earlier: (row: Row) => Analysed): Promise<Map<string, Analysed>> {
  const old = (await storedRows(dataDir)).map((r) => ({ id: r.id, ...earlier(r) }));
  const store = await VectorStore.open(join(dataDir, 'lancedb'));
  const index = await ChunkIndex.open(store, EMBEDDER);
  await index.writeColumns(old, ['language', 'keyword_text', 'keyword_analysis']);
  await index.close();
  store.close();
  return new Map(old.map(({ id, ...analysed }) => [id as string, analysed]));
}

/** The index info's record that every row was analysed by `version` (what the release that wrote them says). */
function recordAnalysis(dataDir: string, version: number): void {
  const infoFile = join(dataDir, 'lancedb', 'chunks-index.json');
  writeFileSync(infoFile, JSON.stringify({ ...JSON.parse(readFileSync(infoFile, 'utf8')), keywordAnalysis: version }));
}

const recordedAnalysis = (dataDir: string): number => JSON.parse(readFileSync(join(dataDir, 'lancedb', 'chunks-index.json'), 'utf8')).keywordAnalysis;

describe('analysing a stored library again after the analysis changed', () => {
  let daemon: Daemon | undefined;
  const dataDirs: string[] = [];
  afterAll(async () => {
    await daemon?.stop();
    for (const dir of dataDirs) removeDir(dir);
  });

  it('reads the chunks the change reads otherwise again, keeps a set language, and leaves the rest', async () => {
    daemon = await startDaemon();
    dataDirs.push(daemon.dataDir);
    const user = await addUser(daemon);
    const up = await uploadFiles(daemon, user.apiKey, [{ name: 'apropos.txt', bytes: polish }, { name: 'tides.txt', bytes: english }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const set = await uploadFiles(daemon, user.apiKey, [{ name: 'apropos-en.txt', bytes: Buffer.concat([polish, Buffer.from('\n')]) }], { query: '?wait=true', fields: { language: 'en' } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const ids = Object.fromEntries([...up.body.documents, ...set.body.documents].map((d: { id: string; filename: string }) => [d.filename, d.id]));
    const docs = async () => Object.fromEntries(((await api(daemon!, '/api/v1/documents', { token: user.apiKey })).body.documents as { filename: string; language: string }[]).map((d) => [d.filename, d.language]));
    expect(await docs()).toEqual({ 'apropos.txt': 'pl', 'tides.txt': 'en', 'apropos-en.txt': 'en' });
    const question = 'przeszukiwanie nazw stron podręcznika';
    const found = async () => ((await api(daemon!, '/api/v1/search', { token: user.apiKey, body: { query: question, mode: 'keyword', limit: 20 } })).body.results as { document: { filename: string } }[]).map((r) => r.document.filename);
    expect(await found()).toContain('apropos.txt');
    const dataDir = daemon.dataDir;
    await daemon.stop();

    // What analysis 1 wrote: the Polish chunks English, stemmed as English; no row's version recorded.
    const written = await rewriteRows(dataDir, (r) =>
      r.document_id === ids['apropos.txt']
        ? { language: 'en', keyword_text: analyseText(r.search_text as string, 'en'), keyword_analysis: null }
        : { language: r.language, keyword_text: r.keyword_text, keyword_analysis: null },
    );
    recordAnalysis(dataDir, 1);
    withLibraryDb(dataDir, (db) => db.prepare("UPDATE documents SET language = 'en' WHERE id = ?").run(ids['apropos.txt']));

    // Today's analysis in the background: the Polish chunks are Polish again, their document too.
    daemon = await startDaemon({ dataDir });
    await untilHealth(daemon, (c) => c.backfill?.state === 'done', 'the backfill done', 120_000);
    expect(recordedAnalysis(dataDir)).toBe(ANALYSIS_VERSION);
    expect(await docs()).toEqual({ 'apropos.txt': 'pl', 'tides.txt': 'en', 'apropos-en.txt': 'en' });
    const inPolish = await api(daemon, '/api/v1/search', { token: user.apiKey, body: { query: question, mode: 'keyword', limit: 20, filters: { language: 'pl' } } });
    expect((inPolish.body.results as { document: { filename: string } }[]).map((r) => r.document.filename)).toContain('apropos.txt');
    expect(await found()).toContain('apropos.txt');
    await daemon.stop();

    // Row by row: the Polish document's chunks and the one set to English were written again, by today's analysis;
    // the English document's were not.
    const now = await storedRows(dataDir);
    expect(now.length).toBe(written.size);
    for (const r of now) {
      if (r.document_id === ids['tides.txt']) expect(r, 'the English chunk as analysis 1 wrote it').toMatchObject(written.get(r.id as string)!);
      else if (r.document_id === ids['apropos-en.txt']) expect(r).toMatchObject({ language: 'en', keyword_analysis: ANALYSIS_VERSION });
      else expect(r).toMatchObject({ language: 'pl', keyword_analysis: ANALYSIS_VERSION });
    }
  }, 300_000);

  it('reads again the chunks analysis 2 wrote with a word joined or accented, and the Afrikaans ones analysis 1 told English', async () => {
    const texts: Record<string, string> = {
      'office.txt': 'Questions about the tide timetable go by e-mail to the harbour office before noon.',
      'cv.txt': 'Applicants send their résumé to the harbour personnel office before the end of March.',
      'tides.txt': english.toString(),
      'notes.txt': 'Fishing boats leave the inner basin at dawn and return with the evening tide.',
      'kaai.txt': 'Die hawemeester hou die getytabelle vir die riviermond by en plaas hulle elke Maandagoggend by die sluishek. Ons het nie genoeg tyd nie, maar hy sal die tabelle vir ons stuur.',
    };
    daemon = await startDaemon();
    dataDirs.push(daemon.dataDir);
    const user = await addUser(daemon);
    const up = await uploadFiles(daemon, user.apiKey, Object.entries(texts).map(([name, text]) => ({ name, bytes: Buffer.from(text) })), { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const nameOf = new Map<string, string>(up.body.documents.map((d: { id: string; filename: string }) => [d.id, d.filename]));
    const docs = async () => Object.fromEntries(((await api(daemon!, '/api/v1/documents', { token: user.apiKey })).body.documents as { filename: string; language: string }[]).map((d) => [d.filename, d.language]));
    expect((await docs())['kaai.txt']).toBe('af');
    const dataDir = daemon.dataDir;
    await daemon.stop();

    // What analysis 2 wrote (its analyseText of these chunks' text as searched, the file name heading it): "e-mail"
    // as "mail" alone, "résumé" without "resum". The Afrikaans chunk and one more English one as analysis 1 wrote them,
    // which analysis 2 left: English, no version.
    const byAnalysis2: Record<string, string> = {
      'office.txt': 'offic txt question tide timet go mail harbour offic noon',
      'cv.txt': 'cv txt applic send résumé resume harbour personnel offic end march',
    };
    const written = await rewriteRows(dataDir, (r) => {
      const name = nameOf.get(r.document_id as string)!;
      expect(r.search_text).toBe(`${name}\n\n${texts[name]}`);
      if (name === 'kaai.txt') return { language: 'en', keyword_text: analyseText(r.search_text as string, 'en'), keyword_analysis: null };
      return { language: r.language, keyword_text: byAnalysis2[name] ?? r.keyword_text, keyword_analysis: name === 'notes.txt' ? null : 2 };
    });
    recordAnalysis(dataDir, 2);
    withLibraryDb(dataDir, (db) => db.prepare("UPDATE documents SET language = 'en' WHERE filename = 'kaai.txt'").run());

    daemon = await startDaemon({ dataDir });
    await untilHealth(daemon, (c) => c.backfill?.state === 'done', 'the backfill done', 120_000);
    expect(recordedAnalysis(dataDir)).toBe(ANALYSIS_VERSION);
    expect((await docs())['kaai.txt']).toBe('af');
    for (const [query, filename] of [['email', 'office.txt'], ['resume', 'cv.txt']]) {
      const res = await api(daemon, '/api/v1/search', { token: user.apiKey, body: { query, mode: 'keyword', limit: 20 } });
      expect((res.body.results as { document: { filename: string } }[]).map((r) => r.document.filename), query).toContain(filename);
    }
    await daemon.stop();

    // Row by row: the joined, accented and Afrikaans chunks were written again; the plain English ones (of analysis 2
    // and of analysis 1) were not.
    for (const r of await storedRows(dataDir)) {
      const name = nameOf.get(r.document_id as string)!;
      if (name === 'tides.txt' || name === 'notes.txt') expect(r, `${name} as it was written`).toMatchObject(written.get(r.id as string)!);
      else expect(r, name).toMatchObject({ language: name === 'kaai.txt' ? 'af' : 'en', keyword_analysis: ANALYSIS_VERSION });
    }
  }, 300_000);

  it('reads again the chunks analysis 3 wrote with a word of a letter and symbols or an abbreviation with points', async () => {
    const texts: Record<string, string> = {
      'cpp.txt': 'Templates in C++ are expanded by the compiler for every type.',
      'thesis.txt': 'Her Ph.D. thesis on tidal currents was defended at the harbour institute.',
      'office.txt': 'Questions about the tide timetable go by e-mail to the harbour office before noon.',
    };
    daemon = await startDaemon();
    dataDirs.push(daemon.dataDir);
    const user = await addUser(daemon);
    const up = await uploadFiles(daemon, user.apiKey, Object.entries(texts).map(([name, text]) => ({ name, bytes: Buffer.from(text) })), { query: '?wait=true', fields: { language: 'en' } });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const nameOf = new Map<string, string>(up.body.documents.map((d: { id: string; filename: string }) => [d.id, d.filename]));
    const dataDir = daemon.dataDir;
    await daemon.stop();

    // What analysis 3 wrote: "C++" nothing, "Ph.D." ph alone; e-mail as today.
    const byAnalysis3: Record<string, string> = {
      'cpp.txt': 'cpp txt templat expand compil everi type',
      'thesis.txt': 'thesi txt ph thesi tidal current defend harbour institut',
    };
    const written = await rewriteRows(dataDir, (r) => {
      const name = nameOf.get(r.document_id as string)!;
      return { language: r.language, keyword_text: byAnalysis3[name] ?? r.keyword_text, keyword_analysis: 3 };
    });
    recordAnalysis(dataDir, 3);

    daemon = await startDaemon({ dataDir });
    await untilHealth(daemon, (c) => c.backfill?.state === 'done', 'the backfill done', 120_000);
    expect(recordedAnalysis(dataDir)).toBe(ANALYSIS_VERSION);
    for (const [query, filename] of [['C++', 'cpp.txt'], ['PhD', 'thesis.txt']]) {
      const res = await api(daemon, '/api/v1/search', { token: user.apiKey, body: { query, mode: 'keyword', limit: 20 } });
      expect((res.body.results as { document: { filename: string } }[]).map((r) => r.document.filename), query).toEqual([filename]);
    }
    await daemon.stop();

    for (const r of await storedRows(dataDir)) {
      const name = nameOf.get(r.document_id as string)!;
      if (name === 'office.txt') expect(r, `${name} as it was written`).toMatchObject(written.get(r.id as string)!);
      else expect(r, name).toMatchObject({ keyword_analysis: ANALYSIS_VERSION });
    }
  }, 300_000);
});
