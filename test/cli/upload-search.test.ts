import { exec } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { cliEnv } from './cli-env.js';
import { acceptedList } from '../helpers/accepted-types.js';

/** A small folder of real documents (and things that are not). */
function makeDocs(root: string): void {
  mkdirSync(join(root, 'docs/guides'), { recursive: true });
  writeFileSync(
    join(root, 'docs/vacation.txt'),
    'Vacation policy\n\nEvery employee receives twenty-five days of paid vacation per calendar year. Unused vacation days carry over until the end of March.\n',
  );
  writeFileSync(join(root, 'docs/onboarding.md'), '# Onboarding\n\nNew hires get a laptop and a badge on their first day. The security team sets up the VPN client.\n');
  writeFileSync(join(root, 'docs/guides/expenses.txt'), 'Expense reports are filed within thirty days, with receipts attached for anything above twenty euros.\n');
  writeFileSync(join(root, 'docs/logo.gif'), Buffer.from('GIF89a', 'ascii'));
}

describe('docsearch upload / search / documents', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  let work: string;
  beforeAll(async () => {
    d = await startDaemon();
    user = await addUser(d);
    env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    work = mkdtempSync(join(tmpdir(), 'docsearch-cli-upload-'));
    makeDocs(work);
  });
  afterAll(async () => {
    await d.stop();
    removeDir(d.dataDir);
    removeDir(work);
  });

  const run = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra }, timeoutMs: 240_000 });

  it('the README CI scenario: DOCSEARCH_URL=… DOCSEARCH_TOKEN=dsk_… npx docsearch upload docs/ --project handbook --wait', async () => {
    expect((await run(['projects', 'create', 'handbook'])).code).toBe(0);
    // As written in the README, in a shell, from a CI project that depends on docsearch (so npx finds its bin).
    writeFileSync(join(work, 'package.json'), '{"name":"ci-project","private":true}\n');
    mkdirSync(join(work, 'node_modules/.bin'), { recursive: true });
    symlinkSync(BIN, join(work, 'node_modules/.bin/docsearch'));
    const cmd = `DOCSEARCH_URL=${d.url} DOCSEARCH_TOKEN=${user.apiKey} npx docsearch upload docs/ --project handbook --wait`;
    const res = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      exec(cmd, { cwd: work, env: { ...process.env, ...cliEnv(null), npm_config_offline: 'true', npm_config_update_notifier: 'false' }, timeout: 240_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(res.stderr).toContain('skipped docs/logo.gif: unsupported file type (docsearch reads PDF, Word, OpenDocument, PowerPoint, Excel, EPUB, RTF, CSV, Markdown, HTML, e-mail, images and plain text)');
    expect(res.stderr).toContain('skipped docs/guides/: a folder (add --recursive to include subfolders)');
    expect(res.stderr).toContain('docs/vacation.txt: ready (');
    expect(res.stderr).toContain('done: 2 files ready to search');
    expect(res.code).toBe(0);
    const rows = res.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => [r[0], r[2]])).toEqual([
      ['docs/onboarding.md', 'ready'],
      ['docs/vacation.txt', 'ready'],
    ]);
  });

  it('upload --recursive --wait --json: every file ready and searchable; search --json is the API response', async () => {
    const res = await run(['upload', join(work, 'docs'), '--recursive', '--project', 'handbook', '--wait', '--json', '--metadata', '{"source":"test"}']);
    expect(res.code).toBe(0);
    // --json leaves out the progress lines and the summary: stdout is the one document, stderr holds nothing here.
    expect(res.stderr).toBe('');
    const out = JSON.parse(res.stdout);
    expect(out.failed).toEqual([]);
    expect(out.documents.map((x: { filename: string; status: string }) => [x.filename, x.status])).toEqual([
      ['expenses.txt', 'ready'],
      ['onboarding.md', 'ready'],
      ['vacation.txt', 'ready'],
    ]);
    // The two files from the CI upload are the same bytes: the server returns those documents.
    expect(out.documents.filter((x: { duplicate?: boolean }) => x.duplicate).length).toBe(2);

    const search = await run(['search', 'how many vacation days do employees get', '--project', 'handbook', '--limit', '3', '--json']);
    expect(search.code).toBe(0);
    const body = JSON.parse(search.stdout);
    expect(body.results[0].document.filename).toBe('vacation.txt');
    const projectId = body.results[0].project.id;
    const direct = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'how many vacation days do employees get', limit: 3, project_ids: [projectId] } });
    expect(direct.status).toBe(200);
    const strip = (r: { took_ms: number }) => ({ ...r, took_ms: 0 });
    expect(strip(body)).toEqual(strip(direct.body));

    const plain = await run(['search', 'expense receipts', '--limit', '1']);
    expect(plain.code).toBe(0);
    // Where the score came from (its rank in each list), not a rank-fusion value like 0.016.
    expect(plain.stdout).toMatch(/^1\. docs\/guides\/expenses\.txt {2}\[handbook\] vector #1 · keyword #1\n {3}Expense reports/);
    expect(plain.stdout).not.toContain('\x1b[');

    const docs = await run(['documents', 'list', '--project', 'handbook', '--status', 'ready']);
    expect(docs.stdout.trimEnd().split('\n').map((l) => l.split('\t')[1]).sort()).toEqual(['docs/guides/expenses.txt', 'docs/onboarding.md', 'docs/vacation.txt']);
  });

  it('a file the server refuses and a file that fails processing: non-zero exit naming each file', async () => {
    const dir = join(work, 'bad');
    mkdirSync(dir);
    writeFileSync(join(dir, 'garbage.pdf'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)));
    writeFileSync(join(dir, 'broken.pdf'), '%PDF-1.7\nthis is not really a PDF at all\n%%EOF\n');
    writeFileSync(join(dir, 'fine.txt'), 'A perfectly fine text file about quarterly planning.\n');
    const res = await run(['upload', dir, '--project', 'handbook', '--wait']);
    expect(res.code).toBe(1);
    const last = res.stderr.trimEnd().split('\n');
    // One line per failed file; the rejected one (no document) is not pointed at `documents show`.
    // The summary comes first, also when files failed.
    expect(last).toContain('done: 1 file ready to search, 2 failed');
    const at = last.indexOf('error: 2 of 3 files failed:');
    expect(at).toBeGreaterThanOrEqual(0);
    // Entries start two spaces in; a long one wraps onto lines indented further.
    const entries = last.slice(at + 1, last.findIndex((l) => l.startsWith('hint: '))).reduce<string[]>((out, l) => (/^ {2}\S/.test(l) ? [...out, l] : [...out.slice(0, -1), `${out.at(-1)} ${l.trim()}`]), []);
    expect(entries).toHaveLength(2);
    const failures = entries.sort();
    expect(failures[0]).toMatch(new RegExp(`^  ${join(dir, 'broken.pdf').replace(/[.]/g, '\\.')}: .+ \\(document doc_\\w+\\)$`));
    expect(failures[1]).toBe(`  ${join(dir, 'garbage.pdf')}: "garbage.pdf" is not a type docsearch reads (accepted: ${acceptedList()})`);
    expect(last.at(-1)).toMatch(/^hint: fix those files and upload them again; `docsearch documents show doc_\w+` has details$/);
    expect(res.stdout).toContain(`${join(dir, 'fine.txt')}\t`);
    expect(res.stdout).toMatch(/garbage\.pdf\t\trejected/);
  });

  it('search shows a short passage around the match, wrapped and indented to the terminal, and the API says where scores came from', async () => {
    const dir = join(work, 'long');
    mkdirSync(dir);
    const filler = (topic: string) => Array.from({ length: 12 }, (_, i) => `Paragraph ${i} keeps talking about ${topic} at some length without saying much.`).join(' ');
    writeFileSync(join(dir, 'manual.txt'), `${filler('office plants')} The fire assembly point is the north parking lot beside the bicycle shed. ${filler('printer toner')}\n`);
    expect((await run(['upload', dir, '--project', 'handbook', '--wait'])).code).toBe(0);
    const res = await run(['search', 'where is the fire assembly point', '--project', 'handbook', '--limit', '1', '--mode', 'keyword'], { COLUMNS: '60' });
    expect(res.code).toBe(0);
    const [title, ...body] = res.stdout.trimEnd().split('\n');
    expect(title).toMatch(/^1\. long\/manual\.txt {2}\[handbook\] keyword #1$/);
    expect(body.map((l) => l.trim()).join(' ')).toContain('fire assembly point is the north parking lot');
    for (const line of body) {
      expect(line.length).toBeLessThanOrEqual(60);
      expect(line.startsWith('   ')).toBe(true);
    }
    // A passage, not the whole chunk.
    expect(body.join(' ').length).toBeLessThan(400);
    const api1 = await run(['search', 'where is the fire assembly point', '--project', 'handbook', '--limit', '1', '--json']);
    const top = JSON.parse(api1.stdout).results[0];
    expect(top.scores.vector).toMatchObject({ rank: expect.any(Number), similarity: expect.any(Number) });
    expect(top.scores.keyword).toMatchObject({ rank: expect.any(Number), bm25: expect.any(Number) });
    expect(top.score).toBeGreaterThan(0);
  });

  it('deletes a document only with --yes when not on a terminal', async () => {
    const list = JSON.parse((await run(['documents', '--json'])).stdout);
    const doc = list.documents.find((x: { filename: string }) => x.filename === 'expenses.txt');
    const show = JSON.parse((await run(['documents', 'show', doc.id, '--json'])).stdout);
    expect(show).toMatchObject({ id: doc.id, status: 'ready' });
    expect((await run(['documents', 'delete', doc.id])).code).toBe(2);
    const del = await run(['documents', 'delete', doc.id, '--yes']);
    expect(del.code).toBe(0);
    expect(del.stderr).toBe(`deleted expenses.txt (${doc.id}): restore it with \`docsearch trash restore ${doc.id}\`\n`);
    expect((await api(d, `/api/v1/documents/${doc.id}`, { token: user.apiKey })).status).toBe(404);
  });
});
