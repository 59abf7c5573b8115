/**
 * Words made of a letter and symbols, and abbreviations with points, meet through a real daemon (analysis 4:
 * language/symbol-words.ts, joined-words.ts; docs/search.md#languages): C++, C#, F# are words of their own, apart
 * from each other and from the letter C, by the REST search in keyword and hybrid mode, the CLI and MCP; Ph.D. and
 * PhD, M.Sc. and MSc, AT&T and ATT, x86_64 and x86-64 meet. Each result highlights the word that met.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, runCli } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { call, httpClient } from '../mcp/mcp-client.js';

const DOCS: Record<string, string> = {
  'cpp.txt': 'C++ templates are expanded by the compiler for every type they are used with; g++ reports their errors at length.',
  'csharp.txt': 'C# generics are not templates: the runtime shares one body of code between all reference types.',
  'fsharp.txt': 'F# matches a value against the cases of a discriminated union and warns about a case left out.',
  'clang.txt': 'The C language leaves memory to the programmer: every malloc needs its free, and templates are unknown.',
  'thesis.txt': 'Her Ph.D. thesis on tidal currents in the estuary was defended at the harbour institute in May.',
  'degree.txt': 'The new harbour master holds a PhD in marine biology and teaches a course on estuaries.',
  'course.txt': 'The M.Sc. course in oceanography takes two years, with a term at sea on the survey vessel.',
  'telecom.txt': 'The telephone lines of the harbour office were leased from AT&T until the exchange was sold.',
  'builds.txt': 'Release packages of the tide server are built for x86-64 Linux, and for ARM boards on request.',
  'memory.txt': 'The x86 machine in the office has 64 gigabytes.',
};

/** Query → the document it must find, and the word of it that met (highlighted). */
const CASES: [query: string, filename: string, word: string][] = [
  ['C++', 'cpp.txt', 'C++'],
  ['C#', 'csharp.txt', 'C#'],
  ['F#', 'fsharp.txt', 'F#'],
  ['g++', 'cpp.txt', 'g++'],
  ['PhD', 'thesis.txt', 'Ph.D'],
  ['Ph.D.', 'degree.txt', 'PhD'],
  ['MSc', 'course.txt', 'M.Sc'],
  ['ATT', 'telecom.txt', 'AT&T'],
  ['x86_64', 'builds.txt', 'x86-64'],
];

interface Result {
  text: string;
  highlights: [number, number][];
  scores: { keyword?: { rank: number } };
  document: { filename: string };
}

/** Whether one highlight covers the first `word` of `text`. */
const covers = (text: string, highlights: [number, number][], word: string): boolean => {
  const at = text.indexOf(word);
  return at >= 0 && highlights.some(([s, e]) => s <= at && e >= at + word.length);
};

describe('words of a letter and symbols, and abbreviations with points', () => {
  let d: Daemon;
  let token: string;
  let projectId: string;
  daemonForSuite(async (started) => {
    d = started;
    token = (await addUser(d)).apiKey;
    projectId = (await api(d, '/api/v1/projects', { token, body: { name: 'languages' } })).body.id as string;
    const files = Object.entries(DOCS).map(([name, text]) => ({ name, bytes: Buffer.from(text) }));
    // Set to English: lines this short are not told reliably, and the forms are the language's.
    const up = await uploadFiles(d, token, files, { query: '?wait=true', projectId, fields: { language: 'en' } });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
  });

  const search = async (query: string, mode: 'keyword' | 'hybrid'): Promise<Result[]> => {
    const res = await api(d, '/api/v1/search', { token, body: { query, mode, limit: 20, project_ids: [projectId] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results as Result[];
  };
  /** The documents the keyword list found, best first. */
  const byWords = (results: Result[]) => results.filter((r) => r.scores.keyword).map((r) => r.document.filename);

  for (const mode of ['keyword', 'hybrid'] as const) {
    it.each(CASES)(`${mode} mode: "%s" finds %s by "%s", highlighted`, async (query, filename, word) => {
      const results = await search(query, mode);
      expect(byWords(results), `"${query}" finds ${filename} by its words`).toContain(filename);
      const hit = results.find((r) => r.document.filename === filename)!;
      expect(covers(hit.text, hit.highlights, word), `"${query}" highlights "${word}"`).toBe(true);
    });
  }

  it('keeps C++, C# and F# apart from each other and from the letter C', async () => {
    for (const [query, filename] of [['C++', 'cpp.txt'], ['c#', 'csharp.txt'], ['F#', 'fsharp.txt']]) {
      expect(byWords(await search(query!, 'keyword')), query).toEqual([filename]);
    }
    // "C++ templates": the C++ page before the others that say "templates".
    const templates = byWords(await search('C++ templates', 'keyword'));
    expect(templates[0]).toBe('cpp.txt');
    expect(templates.slice(1).sort()).toEqual(['clang.txt', 'csharp.txt']);
  });

  it('reads x86_64 as x86-64, one word: that page before a shorter one with "x86" and "64" apart', async () => {
    expect(byWords(await search('x86_64', 'keyword'))).toEqual(['builds.txt', 'memory.txt']);
  });

  it('finds C# through the CLI and C++ through MCP, highlighted', async () => {
    const cli = await runCli(['search', '--json', '--mode', 'keyword', '--project', projectId, 'C#'], { env: cliEnv(d, { DOCSEARCH_TOKEN: token }) });
    expect(cli.code, cli.stderr).toBe(0);
    const shown = JSON.parse(cli.stdout).results as Result[];
    expect(shown.map((r) => r.document.filename)).toEqual(['csharp.txt']);
    expect(covers(shown[0]!.text, shown[0]!.highlights, 'C#')).toBe(true);

    const mcp = await httpClient(d, token);
    try {
      const found = await call(mcp, 'search', { query: 'C++', mode: 'keyword', project_id: projectId });
      const results = found.results as { filename: string; text: string; highlights: [number, number][] }[];
      expect(results.map((r) => r.filename)).toEqual(['cpp.txt']);
      expect(covers(results[0]!.text, results[0]!.highlights, 'C++')).toBe(true);
    } finally {
      await mcp.close();
    }
  });
});
