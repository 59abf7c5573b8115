/**
 * `docsearch search` through the built binary against a real daemon: grouped by document on a terminal (a real
 * pseudo-terminal from util-linux `script`), the flat list through a pipe or with --passages, paging past the
 * API's page size with --limit and --all, header lines wrapped at the terminal's width between words, weak
 * answers and documents still being indexed said in words, the sync path shown, --json as the API response.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, REPO, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { storedChunks, uploadFiles } from '../ingest/pipeline/helpers.js';
import { cliEnv } from './cli-env.js';

const txt = (s: string) => Buffer.from(s, 'utf8');
const WORD = 'zorblax';
const NOTES = 120;
const LONG_NAME = 'quarterly maintenance schedule for the northern lighthouse keepers association and its volunteers.txt';

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** Runs the CLI on a pseudo-terminal 80 columns wide; stdout and stderr arrive together, as a person sees them. */
function runTty(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const cmd = `stty cols 80 rows 60; ${[process.execPath, BIN, ...args].map(shellQuote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const proc = spawn('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, ...env, COLUMNS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`docsearch ${args.join(' ')} timed out:\n${out}`));
    }, 120_000);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out: out.replaceAll('\r\n', '\n') });
    });
  });
}

describe('docsearch search', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  /** Chunks holding the word, all and in the handbook: the exact keyword answer. */
  let passages = 0;
  let handbook = 0;

  beforeAll(async () => {
    d = await startDaemon({ timeoutMs: 60_000 });
    user = await addUser(d);
    env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const files = Array.from({ length: NOTES }, (_, i) => ({
      name: `note-${i + 1}.txt`,
      bytes: txt(`Specimen note ${i + 1}. The ${WORD} sample ${i + 1} rests on shelf ${(i % 9) + 1} of the cold room.`),
      path: `notes/note-${i + 1}.txt`,
    }));
    const filler = Array.from({ length: 24 }, (_, i) => `Paragraph ${i + 1} describes the routine of the workshop in plain words.`).join(' ');
    files.push({ name: 'handbook.txt', bytes: txt(`The ${WORD} cabinet stays locked at night.\n\n${filler}\n\nReport a cracked ${WORD} jar the same day.\n\n${filler}\n\nLabel each ${WORD} drawer.`), path: 'handbook.txt' });
    files.push({ name: LONG_NAME, bytes: txt('The lens of the northern lighthouse was polished and its clockwork oiled before the winter storms.'), path: LONG_NAME });
    for (let i = 0; i < files.length; i += 20) {
      const batch = files.slice(i, i + 20);
      const res = await uploadFiles(d, user.apiKey, batch, { query: '?wait=true', fields: { paths: JSON.stringify(batch.map((f) => f.path)) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      for (const doc of res.body.documents) {
        const n = (await storedChunks(d.dataDir, doc.id)).rows.filter((r) => r.text.includes(WORD)).length;
        passages += n;
        if (doc.filename === 'handbook.txt') handbook = n;
      }
    }
    expect(handbook).toBeGreaterThanOrEqual(3);
  }, 600_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  const run = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra }, timeoutMs: 120_000 });
  /** How the handbook's entry counts its passages: all of them are shown (three at most are). */
  const handbookCount = () => `${handbook} passages in the results${handbook > 3 ? ', best 3 shown' : ''}`;

  it('on a terminal: one entry per document, its passages under it, the count and how to see more', async () => {
    const { code, out } = await runTty(['search', `${WORD} cabinet jar drawer`, '--mode', 'keyword', '--limit', '3'], env);
    expect(code).toBe(0);
    const lines = out.trimEnd().split('\n');
    const headers = lines.filter((l) => /^\d+\. /.test(l));
    expect(headers).toHaveLength(3);
    expect(headers[0]).toBe(`1. handbook.txt  [default]  ${handbookCount()}`);
    for (const h of headers.slice(1)) expect(h).toMatch(/^[23]\. notes\/note-\d+\.txt {2}\[default\]$/);
    // Its best passages (three at most) follow, indented, each with where it ranked.
    expect(lines[1]).toBe('   keyword #1');
    expect(lines.filter((l) => /^ {3}keyword #\d+$/.test(l))).toHaveLength(3 + 2);
    expect(lines.at(-1)).toBe(`3 of ${NOTES + 1} documents in ${/in (\d+) ms/.exec(lines.at(-1)!)![1]} ms; --limit N or --all for more`);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
  });

  it('through a pipe, or with --passages: every passage in rank order; --documents groups through a pipe', async () => {
    const piped = await run(['search', `${WORD} cabinet`, '--mode', 'keyword', '--limit', '2']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/^1\. handbook\.txt {2}\[default\] keyword #1\n {3}The zorblax cabinet/);
    expect(piped.stderr).toBe(`2 of ${passages} passages in ${/in (\d+) ms/.exec(piped.stderr)![1]} ms; --limit N or --all for more\n`);
    const tty = await runTty(['search', `${WORD} cabinet`, '--mode', 'keyword', '--limit', '2', '--passages'], env);
    expect(tty.out).toMatch(/^1\. handbook\.txt {2}\[default\] keyword #1\n/);
    const grouped = await run(['search', `${WORD} cabinet`, '--mode', 'keyword', '--limit', '2', '--documents']);
    expect(grouped.stdout.startsWith(`1. handbook.txt  [default]  ${handbookCount()}\n   keyword #1\n`)).toBe(true);
    const both = await run(['search', WORD, '--passages', '--documents']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '--passages' cannot be used with option '--documents'");
  });

  it('--limit past one API page and --all page through to the end, each result once', async () => {
    const some = await run(['search', WORD, '--mode', 'keyword', '--limit', '110', '--json']);
    expect(some.code).toBe(0);
    const body = JSON.parse(some.stdout);
    expect(body.results).toHaveLength(110);
    expect(body.next_cursor).toEqual(expect.any(String));
    expect(body.total).toEqual({ value: passages, relation: 'eq' });
    const all = JSON.parse((await run(['search', WORD, '--mode', 'keyword', '--all', '--json'])).stdout);
    const ids = all.results.map((r: { chunk_id: string }) => r.chunk_id);
    expect(ids).toHaveLength(passages);
    expect(new Set(ids).size).toBe(ids.length);
    expect(all.next_cursor).toBeNull();
    const docs = JSON.parse((await run(['search', WORD, '--mode', 'keyword', '--all', '--documents', '--json'])).stdout);
    expect(docs.documents).toHaveLength(NOTES + 1);
    expect(docs.results).toBeUndefined();
    // "cabinet" puts the handbook first: the word alone ranks the short notes' passages above its long ones.
    const fields = JSON.parse((await run(['search', `${WORD} cabinet`, '--mode', 'keyword', '--documents', '--limit', '1', '--json', 'document,matches'])).stdout);
    expect(fields.documents).toEqual([{ document: expect.objectContaining({ filename: 'handbook.txt', path: 'handbook.txt' }), matches: handbook }]);
    const plain = await run(['search', WORD, '--mode', 'keyword', '--all']);
    expect(plain.stdout.split('\n').filter((l) => /^\d+\. /.test(l))).toHaveLength(passages);
    expect(plain.stderr).toBe(`${passages} of ${passages} passages in ${/in (\d+) ms/.exec(plain.stderr)![1]} ms\n`);
  });

  it('a document with more passages than it shows says so, and --document NAME lists all of them (#53 item 8)', async () => {
    const sections = Array.from({ length: 12 }, (_, i) =>
      [`Section ${i + 1}`, '', ...Array.from({ length: 6 }, (_, j) => `Field log ${i + 1}.${j + 1}: the quillwort bed by marker ${i * 6 + j} was counted again at dawn.`)].join('\n'),
    );
    const up = await uploadFiles(d, user.apiKey, [{ name: 'quillwort survey.md', bytes: txt(sections.join('\n\n')) }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const chunks = (await storedChunks(d.dataDir, up.body.documents[0].id)).rows.filter((r) => r.text.includes('quillwort')).length;
    expect(chunks).toBeGreaterThan(3);
    const grouped = await runTty(['search', 'quillwort', '--mode', 'keyword'], env);
    const lines = grouped.out.trimEnd().split('\n');
    expect(lines[0]).toBe(`1. quillwort survey.md  [default]  ${chunks} passages in the results, best 3 shown`);
    expect(lines.at(-1)).toBe('every passage of one document: add --document NAME');
    const all = await run(['search', 'quillwort', '--mode', 'keyword', '--document', 'quillwort survey.md', '--all']);
    expect(all.code, all.stderr).toBe(0);
    const headers = all.stdout.split('\n').filter((l) => /^\d+\. /.test(l));
    expect(headers).toHaveLength(chunks);
    for (const h of headers) expect(h).toMatch(/^\d+\. quillwort survey\.md /);
    const missing = await run(['search', 'quillwort', '--document', 'no such survey.md']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('document "no such survey.md" not found');
  });

  it('wraps result headers at the terminal width between words, never inside one', async () => {
    const { out } = await runTty(['search', 'polishing the lighthouse lens before winter', '--passages', '--limit', '1'], env);
    const header = out.split('\n').slice(0, out.split('\n').findIndex((l) => l.startsWith('   The lens')));
    expect(header.length).toBeGreaterThan(1);
    for (const l of header) expect(l.length).toBeLessThanOrEqual(80);
    expect(header.slice(1).every((l) => l.startsWith('   '))).toBe(true);
    // Every word of the long name is whole on some line.
    const words = header.join(' ').split(/\s+/);
    for (const w of LONG_NAME.split(' ')) expect(words).toContain(w);
    const piped = await run(['search', 'polishing the lighthouse lens before winter', '--limit', '1'], { COLUMNS: '60' });
    for (const l of piped.stdout.trimEnd().split('\n')) expect(l.length).toBeLessThanOrEqual(60);
  });

  it('says when nothing is close, and when documents are still being indexed', async () => {
    const weak = await run(['search', 'xyzzyplugh frobnicate', '--limit', '3']);
    expect(weak.code).toBe(0);
    expect(weak.stderr.split('\n')[0]).toBe('no close matches for "xyzzyplugh frobnicate"; these are the nearest passages');
    expect(weak.stdout.split('\n').filter((l) => /^\d+\. /.test(l))).toHaveLength(3);
    const none = await run(['search', 'xyzzyplugh frobnicate', '--mode', 'keyword']);
    expect(none.stderr).toBe('no results for "xyzzyplugh frobnicate"\n');

    const long = Array.from({ length: 400 }, (_, i) => `Line ${i + 1} of the inventory lists one more jar of preserved samples.`).join('\n');
    const up = await uploadFiles(d, user.apiKey, [{ name: 'inventory.txt', bytes: txt(long) }]);
    expect(up.status).toBe(202);
    const during = await run(['search', WORD, '--mode', 'keyword', '--limit', '1']);
    expect(during.stderr.trimEnd().split('\n').at(-1)).toBe('still indexing 1 document: results may be incomplete');
    const json = JSON.parse((await run(['search', WORD, '--mode', 'keyword', '--limit', '1', '--json'])).stdout);
    expect(json.indexing).toBe(1);
    const id = up.body.documents[0].id as string;
    for (let i = 0; i < 600 && (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 250));
    expect((await run(['search', WORD, '--mode', 'keyword', '--limit', '1'])).stderr).not.toContain('still indexing');
  });

  it('cites a slide, or a sheet with its rows, instead of page numbers', async () => {
    const files = ['briefing.pptx', 'berths.xlsx'].map((name) => ({ name, bytes: readFileSync(join(REPO, 'test/fixtures/formats', name)) }));
    expect((await uploadFiles(d, user.apiKey, files, { query: '?wait=true&wait_timeout=300' })).status).toBe(200);
    const slide = await run(['search', 'deckhands mooring lines gale', '--mode', 'keyword', '--limit', '1']);
    expect(slide.stdout).toMatch(/^1\. briefing\.pptx {2}slide 3 · Mooring lines {2}\[default\] keyword #1\n/);
    const rows = await run(['search', 'Borealis refrigerated mackerel', '--mode', 'keyword', '--limit', '1']);
    // The sheet is the passage's heading: said once, after the rows.
    expect(rows.stdout).toMatch(/^1\. berths\.xlsx {2}rows? \d+(–\d+)? · Berths {2}\[default\] keyword #1\n/);
    const json = JSON.parse((await run(['search', 'deckhands mooring lines gale', '--mode', 'keyword', '--limit', '1', '--json', 'citation'])).stdout);
    expect(json.results[0].citation).toEqual({ unit: 'slide', start: 3, end: 3 });
  }, 300_000);
});
