/**
 * A library written by an earlier analysis (1) is analysed again in the background where today's reads its text
 * otherwise (language-backfill.ts `REANALYSED`), through a real daemon: its Polish chunks, labelled English and
 * stemmed as English by analysis 1 (detection then had no Polish function words), become Polish, their document too,
 * and a Polish question finds them by their Polish forms; a chunk of a document set to English keeps English; an
 * English chunk is left as it was written. The earlier state is written underneath the stopped daemon: rows as
 * analysis 1 wrote them (no `keyword_analysis`), the index info saying 1.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyseText } from '../../src/language/analyse.js';
import { ChunkIndex } from '../../src/store/lancedb/chunks.js';
import { VectorStore } from '../../src/store/lancedb/connection.js';
import { addUser, api, type Daemon, REPO, removeDir, startDaemon, untilHealth } from '../helpers/daemon.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const polish = readFileSync(join(REPO, 'test/fixtures/language-detection/pl-apropos.txt'));
const english = Buffer.from('The harbour master keeps the tide tables for the estuary and posts them at the lock gate every Monday morning.');

describe('analysing a stored library again after the analysis changed', () => {
  let daemon: Daemon | undefined;
  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
  });

  it('reads the chunks the change reads otherwise again, keeps a set language, and leaves the rest', async () => {
    daemon = await startDaemon();
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
    const lance = join(dataDir, 'lancedb');
    const written = new Map<string, { language: string | null; keyword_text: string; keyword_analysis: number | null }>();
    {
      const store = await VectorStore.open(lance);
      const index = await ChunkIndex.open(store, { embedderId: 'builtin:all-MiniLM-L6-v2-int8' });
      const rows = await index.rowsWhere('true', ['id', 'document_id', 'search_text', 'language', 'keyword_text'], 10_000);
      const old = rows.map((r) =>
        r.document_id === ids['apropos.txt']
          ? { id: r.id, language: 'en', keyword_text: analyseText(r.search_text as string, 'en'), keyword_analysis: null }
          : { id: r.id, language: r.language, keyword_text: r.keyword_text, keyword_analysis: null },
      );
      await index.writeColumns(old, ['language', 'keyword_text', 'keyword_analysis']);
      for (const r of old) written.set(r.id as string, r as never);
      await index.close();
      store.close();
    }
    const infoFile = join(lance, 'chunks-index.json');
    writeFileSync(infoFile, JSON.stringify({ ...JSON.parse(readFileSync(infoFile, 'utf8')), keywordAnalysis: 1 }));
    withLibraryDb(dataDir, (db) => db.prepare("UPDATE documents SET language = 'en' WHERE id = ?").run(ids['apropos.txt']));

    // Today's analysis in the background: the Polish chunks are Polish again, their document too.
    daemon = await startDaemon({ dataDir });
    await untilHealth(daemon, (c) => c.backfill?.state === 'done', 'the backfill done', 120_000);
    expect(JSON.parse(readFileSync(infoFile, 'utf8')).keywordAnalysis).toBe(2);
    expect(await docs()).toEqual({ 'apropos.txt': 'pl', 'tides.txt': 'en', 'apropos-en.txt': 'en' });
    const inPolish = await api(daemon, '/api/v1/search', { token: user.apiKey, body: { query: question, mode: 'keyword', limit: 20, filters: { language: 'pl' } } });
    expect((inPolish.body.results as { document: { filename: string } }[]).map((r) => r.document.filename)).toContain('apropos.txt');
    expect(await found()).toContain('apropos.txt');
    await daemon.stop();

    // Row by row: the Polish document's chunks and the one set to English were written again, by analysis 2; the
    // English document's were not.
    const store = await VectorStore.open(lance);
    const index = await ChunkIndex.open(store, { embedderId: 'builtin:all-MiniLM-L6-v2-int8' });
    const now = await index.rowsWhere('true', ['id', 'document_id', 'language', 'keyword_text', 'keyword_analysis'], 10_000);
    await index.close();
    store.close();
    expect(now.length).toBe(written.size);
    for (const r of now) {
      if (r.document_id === ids['tides.txt']) expect(r, 'the English chunk as analysis 1 wrote it').toMatchObject(written.get(r.id as string)!);
      else if (r.document_id === ids['apropos-en.txt']) expect(r).toMatchObject({ language: 'en', keyword_analysis: 2 });
      else expect(r).toMatchObject({ language: 'pl', keyword_analysis: 2 });
    }
  }, 300_000);
});
