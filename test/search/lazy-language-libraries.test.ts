/**
 * The language libraries load only when a text needs them (docs/search.md#languages): tinyld at the first ingest or
 * search that needs it (text whose script does not tell its language: not Japanese, not a query of two words),
 * German's word lists with the first German text, jieba and OpenCC with the first Chinese text — so a library
 * without Chinese (Japanese kanji included) never pays their ~70 MB. The daemon runs under
 * test/helpers/record-requires.cjs, which records require() (the language room loads these through createRequire,
 * which an ESM hook does not see) and imports by name.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { loadLanguageSet, setFiles } from '../helpers/language-set.js';
import { recordedDaemon } from '../helpers/recorded-loads.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const TINYLD = 'tinyld';
const JIEBA = '@node-rs/jieba';
const OPENCC = 'opencc-js';
const GERMAN_WORDS = '@zxcvbn-ts/language-de';
const LAZY = [TINYLD, JIEBA, OPENCC, GERMAN_WORDS];

const set = loadLanguageSet();
/** One document of the evaluation set, as the in-suite language test uploads it. */
const documentFile = (id: string) => setFiles({ ...set, documents: set.documents.filter((d) => d.id === id), distractors: [] });

describe('language libraries load at ingest only with a text that needs them', () => {
  const recorded = recordedDaemon();
  let d: Daemon;
  let token: string;
  daemonForSuite(
    async (started) => {
      d = started;
      token = (await addUser(d)).apiKey;
    },
    { ...recorded.options, setupTimeoutMs: 60_000 },
  );

  /**
   * Each document in a project of its own, searched there: a query whose language is not told is read in the
   * languages of the searched projects' documents, counted per scope at most once a minute.
   */
  const projects = new Map<string, string>();
  /** Uploads one document of the set into its project and waits until it is ready. */
  const upload = async (id: string) => {
    const projectId = (await api(d, '/api/v1/projects', { token, body: { name: id } })).body.id as string;
    projects.set(id, projectId);
    const res = await uploadFiles(d, token, documentFile(id), { query: '?wait=true', projectId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.documents[0].status).toBe('ready');
  };
  /** The files a keyword search finds for `query` (in the project of document `id`, or everywhere). */
  const found = async (query: string, id?: string): Promise<string[]> => {
    const scope = id ? { project_ids: [projects.get(id)] } : {};
    const res = await api(d, '/api/v1/search', { token, body: { query, mode: 'keyword', limit: 10, ...scope } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.results as { document: { filename: string } }[]).map((r) => r.document.filename);
  };
  const notLoaded = async (names: string[]) => {
    const loaded = await recorded.loadedBy(d);
    for (const name of names) expect(loaded, `${name} is loaded`).not.toContain(name);
  };

  it('a started daemon, and a search of one word, load none of them', { timeout: 60_000 }, async () => {
    expect(await found('anything')).toEqual([]);
    // The recorders saw the daemon's own loads (and the stages below each of these libraries' require())…
    expect(await recorded.loadedBy(d)).toContain('koa');
    // …and none of these.
    await notLoaded(LAZY);
  });

  it('a Japanese document and a search in kanji load none: the script tells the language, and Japanese is no Chinese', { timeout: 120_000 }, async () => {
    await upload('ja-library');
    expect(await found('図書館', 'ja-library')).toContain('ja-library.md');
    await notLoaded(LAZY);
  });

  it('an English document loads tinyld; English searches load neither jieba, OpenCC nor the German words', { timeout: 120_000 }, async () => {
    await upload('en-library');
    expect(recorded.loaded()).toContain(TINYLD);
    expect(await found('how many books may be borrowed at a time', 'en-library')).toContain('en-library.md');
    expect(await found('reading room', 'en-library')).toContain('en-library.md');
    await notLoaded([JIEBA, OPENCC, GERMAN_WORDS]);
  });

  it('a German document loads its word lists, not jieba or OpenCC', { timeout: 120_000 }, async () => {
    await upload('de-library');
    expect(recorded.loaded()).toContain(GERMAN_WORDS);
    expect(await found('Buecher', 'de-library')).toContain('de-library.md');
    await notLoaded([JIEBA, OPENCC]);
  });

  it('the first Chinese text loads jieba and OpenCC', { timeout: 120_000 }, async () => {
    await upload('zh-library');
    const loaded = recorded.loaded();
    expect(loaded).toContain(JIEBA);
    expect(loaded).toContain(OPENCC);
    expect(await found('圖書館', 'zh-library')).toContain('zh-library.md');
  });
});

describe('tinyld loads at the first search that needs it', () => {
  const recorded = recordedDaemon();
  let d: Daemon;
  let token: string;
  daemonForSuite(
    async (started) => {
      d = started;
      token = (await addUser(d)).apiKey;
    },
    { ...recorded.options, setupTimeoutMs: 60_000 },
  );
  const search = async (query: string) => expect((await api(d, '/api/v1/search', { token, body: { query } })).status).toBe(200);

  it('not for a query of two words, whose language is never told; then for one of three', { timeout: 120_000 }, async () => {
    await search('harbour office');
    expect(await recorded.loadedBy(d)).not.toContain(TINYLD);
    // The search does not wait for it: it loads once the search's own work is done.
    await search('when does the harbour office open');
    await waitFor(() => recorded.loaded().has(TINYLD), 10_000, 'tinyld loaded');
    expect(await recorded.loadedBy(d)).not.toContain(JIEBA);
  });
});
