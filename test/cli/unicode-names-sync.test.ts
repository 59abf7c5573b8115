/**
 * The CLI with names in either Unicode spelling (docs/api.md#names): `upload --sync` of one folder whose names a Mac
 * wrote decomposed (NFD) and a clone or copy elsewhere has composed (NFC), the same paths; `search --saved` by a name
 * typed in the other spelling.
 */
import { mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, runCli } from '../helpers/daemon.js';
import { type CliSuite, cliSuite } from './cli-env.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');

describe('the CLI with names in NFC and NFD', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { setupTimeoutMs: 60_000 });

  it('a folder synced with decomposed names, then with the same names composed: nothing deleted, nothing sent twice; a changed file replaces its document', { timeout: 300_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'docsearch-unicode-')), 'mac');
    const folder = 'Ordner Übersicht';
    mkdirSync(join(dir, NFD(folder)), { recursive: true });
    writeFileSync(join(dir, NFD(folder), NFD('Résumé.txt')), 'The café on the corner serves crème brûlée every morning.\n');
    writeFileSync(join(dir, NFD('Café.txt')), 'Opening hours of the café: eight to six.\n');
    const sync = async () => {
      const res = await runCli(['upload', dir, '--sync', '--prune', '--project', 'mac', '--create-project', '--wait', '--json'], { env: s.env, timeoutMs: 200_000 });
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      return JSON.parse(res.stdout).sync.counts;
    };
    const documents = async () => {
      const res = await runCli(['documents', 'list', '--project', 'mac', '--json'], { env: s.env });
      expect(res.code, res.stderr).toBe(0);
      return (JSON.parse(res.stdout).documents as { id: string; path: string }[]).map((d) => [NFC(d.path), d.id]).sort();
    };

    expect(await sync()).toMatchObject({ new: 2, unchanged: 0, deleted: 0 });
    const first = await documents();
    expect(first.map(([p]) => p)).toEqual([NFC('Café.txt'), NFC(`${folder}/Résumé.txt`)]);

    // The same folder, its names composed (as a git clone or a copy on Linux has them).
    renameSync(join(dir, NFD('Café.txt')), join(dir, NFC('Café.txt')));
    renameSync(join(dir, NFD(folder)), join(dir, NFC(folder)));
    renameSync(join(dir, NFC(folder), NFD('Résumé.txt')), join(dir, NFC(folder), NFC('Résumé.txt')));
    expect(await sync()).toMatchObject({ new: 0, changed: 0, unchanged: 2, deleted: 0 });
    expect(await documents()).toEqual(first);

    // A file changed there replaces its document at the path the project holds, not a second one beside it.
    writeFileSync(join(dir, NFC('Café.txt')), 'Opening hours of the café: seven to seven.\n');
    expect(await sync()).toMatchObject({ new: 0, changed: 1, unchanged: 1, deleted: 0 });
    const after = await documents();
    expect(after.map(([p]) => p)).toEqual(first.map(([p]) => p));
    expect(after[0]![1]).not.toBe(first[0]![1]);
    expect(await sync()).toMatchObject({ new: 0, changed: 0, unchanged: 2, deleted: 0 });
  });

  it('search --saved finds a saved search named in the other Unicode spelling', { timeout: 120_000 }, async () => {
    const made = await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey, body: { name: NFC('Bücher über Café'), search: { query: 'opening hours' } } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const ran = await runCli(['search', '--saved', NFD('bücher über café'), '--json'], { env: s.env });
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
  });
});
