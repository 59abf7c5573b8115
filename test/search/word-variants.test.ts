/**
 * Words a person types otherwise than the document writes them meet through a real daemon, in keyword and hybrid
 * mode (language/analyse.ts, joined-words.ts; docs/search.md#languages): accents left out where the stemmer reads
 * them apart (résumé / resume, autorización / autorizacion, sécurité / securite), hyphens, dots, underscores and
 * apostrophes left out (e-mail, Wi-Fi, COVID-19, U.S.A., max_connections, O'Brien, don't, м'ясо), digit groups
 * (1,500), decimals as written (3.14), camelCase read as its words (parseConfig / "parse config", java /
 * JavaScript). Each result highlights the word that met. And what is not joined: Node.js, TCP/IP and covid19 typed
 * otherwise find nothing.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

/** An English library's documents: a project of their own, as a query is read in the languages its scope holds. */
const ENGLISH: Record<string, string> = {
  'cv.txt': 'Applicants send their résumé and a cover letter to the harbour personnel office before the end of March.',
  'ferry.txt': 'The ferry will resume its crossings to the island once the storm over the estuary has passed.',
  'office.txt': 'Questions about the tide timetable go by e-mail to the harbour office; the Wi-Fi password hangs by the door.',
  'rules.txt': 'COVID-19 rules for the ferry crew were lifted in spring. Ships registered in the U.S.A. pay a reduced harbour fee.',
  'fees.txt': 'The berth fee is 1,500 crowns per night. The tide gauge at the pier read 3.14 metres on Monday.',
  'boats.txt': '3 boats with 14 crew, 3 masts and 14 oars left the pier; 3 came back with 14 nets before the tide turned.',
  'daemon.txt': 'Call parseConfig before the harbour daemon reads max_connections from its settings file.',
  'website.txt': 'The harbour website is written in JavaScript and shows the tide table for the week.',
  'keys.txt': "Captain O'Brien keeps the keys. Visitors, please don't moor at the fuel pier; the harbour manager’s office is upstairs.",
};
/** Spanish and French documents, each in a project of its own (either language's stems may meet the other's). */
const SPANISH = { 'puerto.txt': 'La autorización de acceso al almacén del puerto requiere la aplicación de las normas de la administración portuaria.' };
const FRENCH = { 'escales.txt': 'La sécurité du port et la durée des escales sont fixées par la capitainerie pour tous les salariés du port.' };
/**
 * What the analysis does not join (docs/search.md#languages, "Not joined" and "What it does not do"): points between
 * longer words, a slash, words typed apart; Notepad++ and .NET are read as their words. Set to English, each line
 * being short.
 */
const APART = {
  'runtime.txt': 'The tide server runs on Node.js 20 beside the harbour database.',
  'editor.txt': 'The harbour master edits the timetable in Notepad++ before printing it.',
  'cameras.txt': 'The pier cameras speak TCP/IP over the old cable to the office.',
  'rota.txt': 'The covid19 rota for the ferry crew was dropped in the spring.',
  'booking.txt': 'The berth booking app runs on .NET and prints a ticket at the gate.',
};
/** A German chain of joined words, set to German: E-Mail-Adresse is one word, "email" meets it by its compound parts. */
const GERMAN = { 'hafenbuero.txt': 'Bitte geben Sie Ihre E-Mail-Adresse im Hafenbüro an, damit wir die Liegeplatzrechnung schicken können.' };
/** Set to Ukrainian: a line this short is not told reliably. Its apostrophe is U+02BC, the query's U+0027. */
const UKRAINIAN = { 'rynok.txt': 'Свіже мʼясо привозять на ринок біля порту щоранку, а рибу ввечері.' };

/** Query → the document it must find, and the word of it that met (highlighted). */
const CASES: [query: string, filename: string, word: string][] = [
  ['resume', 'cv.txt', 'résumé'],
  ['résumé', 'ferry.txt', 'resume'],
  ['email', 'office.txt', 'e-mail'],
  ['wifi', 'office.txt', 'Wi-Fi'],
  ['covid19', 'rules.txt', 'COVID-19'],
  ['USA', 'rules.txt', 'U.S.A'],
  ['1500', 'fees.txt', '1,500'],
  ['parse config', 'daemon.txt', 'parseConfig'],
  ['parse_config', 'daemon.txt', 'parseConfig'],
  ['MaxConnections', 'daemon.txt', 'max_connections'],
  // A camelCase part is a word of its own.
  ['java', 'website.txt', 'JavaScript'],
  ['obrien', 'keys.txt', "O'Brien"],
  ['dont', 'keys.txt', "don't"],
  // The curly apostrophe and the straight one alike; the possessive is the word's ("manager" met).
  ["manager's", 'keys.txt', 'manager'],
  ['autorizacion', 'puerto.txt', 'autorización'],
  ['securite', 'escales.txt', 'sécurité'],
  ["м'ясо", 'rynok.txt', 'мʼясо'],
];

interface Result {
  text: string;
  highlights: [number, number][];
  scores: { keyword?: { rank: number } };
  document: { filename: string };
}

describe('words typed otherwise than the document writes them', () => {
  let d: Daemon;
  let token: string;
  const projectOf = new Map<string, string>();
  daemonForSuite(async (started) => {
    d = started;
    token = (await addUser(d)).apiKey;
    const files = (docs: Record<string, string>) => Object.entries(docs).map(([name, text]) => ({ name, bytes: Buffer.from(text) }));
    const libraries: [Record<string, string>, Record<string, string>][] = [[ENGLISH, {}], [SPANISH, {}], [FRENCH, {}], [UKRAINIAN, { language: 'uk' }], [APART, { language: 'en' }], [GERMAN, { language: 'de' }]];
    for (const [i, [docs, fields]] of libraries.entries()) {
      const projectId = (await api(d, '/api/v1/projects', { token, body: { name: `library ${i}` } })).body.id as string;
      const up = await uploadFiles(d, token, files(docs), { query: '?wait=true', projectId, fields });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      for (const f of Object.keys(docs)) projectOf.set(f, projectId);
    }
  });

  /** A search of the project that holds `filename`. */
  const search = async (query: string, mode: 'keyword' | 'hybrid', filename: string): Promise<Result[]> => {
    const res = await api(d, '/api/v1/search', { token, body: { query, mode, limit: 20, project_ids: [projectOf.get(filename)] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results as Result[];
  };
  /** The result of `filename`, found by the keyword list, its highlights covering `word`. */
  const expectMet = (results: Result[], filename: string, word: string, query: string) => {
    const hit = results.find((r) => r.document.filename === filename);
    expect(hit?.scores.keyword, `"${query}" finds ${filename} by its words: ${results.map((r) => r.document.filename).join(', ')}`).toBeDefined();
    const at = hit!.text.indexOf(word);
    expect(hit!.highlights.some(([s, e]) => s <= at && e >= at + word.length), `"${query}" highlights "${word}"`).toBe(true);
  };

  for (const mode of ['keyword', 'hybrid'] as const) {
    it.each(CASES)(`${mode} mode: "%s" finds %s by "%s", highlighted`, async (query, filename, word) => {
      expectMet(await search(query, mode, filename), filename, word, query);
    });
  }

  it('does not join points between longer words, a slash or words typed apart: "nodejs", "tcpip" and "covid 19" find nothing', async () => {
    for (const [query, filename] of [['nodejs', 'runtime.txt'], ['tcpip', 'cameras.txt'], ['covid 19', 'rota.txt']] as const) {
      const results = await search(query, 'keyword', filename);
      expect(results.map((r) => r.document.filename), `"${query}"`).toEqual([]);
    }
    // Each is found by its words as written: Node.js by node and js, TCP/IP by both, Notepad++ by notepad, .NET by net.
    for (const [query, filename, word] of [
      ['Node.js', 'runtime.txt', 'Node.js'],
      ['TCP/IP', 'cameras.txt', 'TCP/IP'],
      ['notepad', 'editor.txt', 'Notepad'],
      ['net', 'booking.txt', 'NET'],
      ['covid19', 'rota.txt', 'covid19'],
    ] as const) {
      const results = await search(query, 'keyword', filename);
      expect(results.map((r) => r.document.filename), `"${query}"`).toEqual([filename]);
      expectMet(results, filename, word, query);
    }
    // A German chain is one word (emailadresse): "email" meets it through German's compound parts.
    const german = await search('email', 'keyword', 'hafenbuero.txt');
    expect(german.map((r) => r.document.filename)).toEqual(['hafenbuero.txt']);
    expectMet(german, 'hafenbuero.txt', 'E-Mail-Adresse', 'email');
  });

  it('reads a decimal as written: "3.14" finds the gauge reading before a text of threes and fourteens', async () => {
    // Keyword mode: in hybrid the embedding of "3.14" is nearest the text of numbers, as it may be.
    const results = await search('3.14', 'keyword', 'fees.txt');
    expect(results.map((r) => r.document.filename).slice(0, 2)).toEqual(['fees.txt', 'boats.txt']);
    expectMet(results, 'fees.txt', '3.14', '3.14');
  });
});
