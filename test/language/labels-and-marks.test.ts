/**
 * Language labels and invisible marks through a real daemon (built binary, built-in model), on real text
 * (test/fixtures/language-detection/): Debian's Polish, Czech, Slovak and Slovene translations are labelled so, not
 * English; a Persian word with its ZWNJ, a Sinhala conjunct with its ZWJ and a Hebrew word with its points are found
 * by a query typed without them (and with them), and marked whole.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const FIXTURES = join(REPO, 'test/fixtures/language-detection');

describe('language labels and invisible marks', () => {
  let d: Daemon;
  let token: string;
  daemonForSuite(
    async (started) => {
      d = started;
      token = (await addUser(d)).apiKey;
      const files = readdirSync(FIXTURES)
        .filter((f) => f.endsWith('.txt'))
        .map((name) => ({ name, bytes: readFileSync(join(FIXTURES, name)) }));
      const res = await uploadFiles(d, token, files);
      expect(res.status).toBe(202);
      await waitFor(async () => {
        const docs = (await api(d, '/api/v1/documents?limit=100', { token })).body.documents as { status: string }[];
        return docs.length === files.length && docs.every((doc) => doc.status === 'ready');
      }, 120_000, 'every document ready');
    },
    { setupTimeoutMs: 300_000 },
  );

  /**
   * The top keyword result for `query`: its file name, and the text under each of its highlights but its answer's (the
   * snippet, one of them: search.md#answers).
   */
  const top = async (query: string): Promise<{ filename: string | undefined; marked: string[] }> => {
    const res = await api(d, '/api/v1/search', { token, body: { query, mode: 'keyword', limit: 1 } });
    expect(res.status).toBe(200);
    const [hit] = res.body.results as { document: { filename: string }; text: string; snippet: string; highlights: [number, number][] }[];
    if (!hit) return { filename: undefined, marked: [] };
    return { filename: hit.document.filename, marked: hit.highlights.map(([s, e]) => hit.text.slice(s, e)).filter((t) => t !== hit.snippet) };
  };

  it('labels Polish, Czech, Slovak and Slovene documents and passages so, not English', async () => {
    const docs = (await api(d, '/api/v1/documents?limit=100', { token })).body.documents as { filename: string; language: string }[];
    const language = Object.fromEntries(docs.map((doc) => [doc.filename, doc.language]));
    expect({ pl: language['pl-apropos.txt'], cs: language['cs-gpasswd.txt'], sk: language['sk-adduser.txt'], sl: language['sl-run-parts.txt'] }).toEqual({
      pl: 'pl',
      cs: 'cs',
      sk: 'sk',
      sl: 'sl',
    });
    // The language filter and facet read each passage's own label.
    const res = await api(d, '/api/v1/search', { token, body: { query: 'skupina', mode: 'keyword', limit: 10, filters: { language: 'cs' }, facets: ['language'] } });
    expect(res.status).toBe(200);
    expect((res.body.results as { document: { filename: string } }[]).map((r) => r.document.filename)).toContain('cs-gpasswd.txt');
    const all = await api(d, '/api/v1/search', { token, body: { query: 'apropos skupina používateľ datoteke', mode: 'keyword', limit: 50, facets: ['language'] } });
    const facet = (all.body.facets.language as { value: string }[]).map((f) => f.value);
    expect(facet).toEqual(expect.arrayContaining(['pl', 'cs', 'sk', 'sl']));
    expect(facet).not.toContain('en');
  });

  it('finds a Persian word written with its ZWNJ by a query without it, and with it, and marks the word whole', async () => {
    for (const query of ['نمیشود', 'نمی\u200cشود']) {
      const { filename, marked } = await top(query);
      expect(filename, query).toBe('fa-glib.txt');
      expect(marked, query).toContain('نمی\u200cشود');
    }
  });

  it('finds a Sinhala conjunct written with its ZWJ by a query without it, and with it, and marks the word whole', async () => {
    for (const query of ['ප්රමාණය', 'ප්\u200dරමාණය']) {
      const { filename, marked } = await top(query);
      expect(filename, query).toBe('si-gtk.txt');
      expect(marked, query).toContain('ප්\u200dරමාණය');
    }
  });

  it('finds a Hebrew word written with points and cantillation by a query without them, and with points, and marks it whole', async () => {
    for (const query of ['הארץ', 'הָאָרֶץ', 'אלהים']) {
      const { filename, marked } = await top(query);
      expect(filename, query).toBe('he-genesis.txt');
      expect(marked.length, query).toBeGreaterThan(0);
      for (const m of marked) expect(m.replace(/\p{M}/gu, ''), query).toBe(query.replace(/\p{M}/gu, ''));
    }
  });
});
