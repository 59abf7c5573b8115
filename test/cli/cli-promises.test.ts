/**
 * docs/cli.md statements no other test held: which credential and server a command uses and where client state goes,
 * the keychain-only mode, when search's matches are emphasised and how wide they wrap, prompts on a terminal (and none
 * with CI set), --json=FIELDS, what --watch does with its ignore file, a held delete and a deleted project, --wait on
 * unchanged files still processing, reads that fail partway, a reranker's score in search output, and the GitHub
 * Action on a runner without docsearch. Second pass (the page's growth since): `upload .` and the folder's name, what
 * `--web` carries (and where no browser opens), a plainly uploaded folder synced without --prefix, a renamed synced
 * document, and `--json FIELDS` on the other commands over several items.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { addUser, api, BIN, REPO, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { loggedIn } from '../server/web-client.js';
import { type CliSuite, cliEnv, cliSuite } from './cli-env.js';
import { onTerminal } from './terminal.js';

const ESC = '\x1b[';

describe('docs/cli.md promises at the terminal and in scripts', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite));
  let other: TestUser;
  let third: TestUser;
  let docId: string;

  beforeAll(async () => {
    [other, third] = [await addUser(s.d), await addUser(s.d)];
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-promises-'));
    writeFileSync(join(dir, 'tide.txt'), 'Tide tables list the high water times for the harbour every day.\n');
    const filler = (topic: string) => Array.from({ length: 8 }, (_, i) => `Paragraph ${i} goes on about ${topic} for a while without saying much at all.`).join(' ');
    writeFileSync(join(dir, 'long.txt'), `${filler('office plants')} The lighthouse keeper logs every passing ship with its flag and the hour it passed. ${filler('printer toner')}\n`);
    const up = await runCli(['upload', dir, '--wait', '--json'], { env: s.env, timeoutMs: 120_000 });
    expect(up.code, up.stderr).toBe(0);
    docId = JSON.parse(up.stdout).documents.find((d: { filename: string }) => d.filename === 'tide.txt').id;
  }, 180_000);

  const whoIs = async (env: Record<string, string>, args: string[] = []) => {
    const res = await runCli(['whoami', '--json', ...args], { env });
    expect(res.code, res.stderr).toBe(0);
    const who = JSON.parse(res.stdout);
    return [who.account.email, who.credential_source];
  };

  it('credentials: --token wins over DOCSEARCH_TOKEN, which wins over the stored login; client.json is 0600', async () => {
    const env = cliEnv(s.d);
    const login = await runCli(['login', '--with-token'], { env, input: s.user.apiKey });
    expect(login.code, login.stderr).toBe(0);
    expect(statSync(join(env.XDG_CONFIG_HOME!, 'docsearch/client.json')).mode & 0o777).toBe(0o600);
    expect(await whoIs(env)).toEqual([s.user.email, 'file']);
    expect(await whoIs({ ...env, DOCSEARCH_TOKEN: other.apiKey })).toEqual([other.email, 'DOCSEARCH_TOKEN']);
    expect(await whoIs({ ...env, DOCSEARCH_TOKEN: other.apiKey }, ['--token', third.apiKey])).toEqual([third.email, '--token']);
  });

  it('defaults: without DOCSEARCH_URL or a login the server is http://127.0.0.1:7411; without XDG_CONFIG_HOME state goes in ~/.config', async () => {
    const env: Record<string, string> = { ...cliEnv(null), XDG_CONFIG_HOME: '' };
    const who = await runCli(['whoami', '--json'], { env: { ...env, DOCSEARCH_TOKEN: s.user.apiKey } });
    expect(JSON.parse(who.stdout)).toMatchObject({ server: 'http://127.0.0.1:7411', server_source: 'built-in default' });
    expect((await runCli(['login', '--server', s.d.url, '--with-token'], { env, input: s.user.apiKey })).code).toBe(0);
    for (const f of ['client.json', 'credentials.json']) expect(existsSync(join(env.HOME!, '.config/docsearch', f)), f).toBe(true);
    expect(JSON.parse((await runCli(['whoami', '--json'], { env })).stdout)).toMatchObject({ server: s.d.url, server_source: 'saved default', verified: true });
  });

  it('DOCSEARCH_CREDENTIALS=keychain fails where there is no keychain instead of writing the file', async () => {
    // No Secret Service can answer on this bus address, whatever the machine has.
    const env = cliEnv(s.d, { DOCSEARCH_CREDENTIALS: 'keychain', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/docsearch-bus' });
    const res = await runCli(['login', '--with-token'], { env, input: s.user.apiKey });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: no OS keychain available: .+\nhint: set DOCSEARCH_CREDENTIALS=file to keep credentials in a 0600 file instead\n$/);
    expect(existsSync(join(env.XDG_CONFIG_HOME!, 'docsearch/credentials.json'))).toBe(false);
  });

  it('emphasis: on a terminal, off with NO_COLOR or TERM=dumb; FORCE_COLOR=0 or CLICOLOR_FORCE=false force nothing, FORCE_COLOR=1 wins over NO_COLOR', async () => {
    const search = ['search', 'high water harbour', '--limit', '1'];
    const on = { ...s.env, NO_COLOR: '', TERM: 'xterm' };
    expect(await onTerminal(100, search, on)).toContain(`${ESC}1m`);
    expect(await onTerminal(100, search, { ...on, NO_COLOR: '1' })).not.toContain(ESC);
    expect(await onTerminal(100, search, { ...on, TERM: 'dumb' })).not.toContain(ESC);
    const piped = await runCli(search, { env: { ...on, FORCE_COLOR: '0', CLICOLOR_FORCE: 'false' } });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain('harbour');
    expect(piped.stdout).not.toContain(ESC);
    expect((await runCli(search, { env: { ...on, NO_COLOR: '1', FORCE_COLOR: '1' } })).stdout).toContain(`${ESC}4m`);
  });

  it('search through a pipe wraps its passages to 80 columns without COLUMNS, and to COLUMNS when set', async () => {
    const search = ['search', 'lighthouse keeper logs every passing ship', '--limit', '1', '--mode', 'keyword'];
    for (const [columns, width] of [['', 80], ['50', 50]] as const) {
      const res = await runCli(search, { env: { ...s.env, COLUMNS: columns } });
      expect(res.code, res.stderr).toBe(0);
      const body = res.stdout.trimEnd().split('\n').slice(1);
      expect(body.join(' ')).toContain('lighthouse keeper');
      expect(Math.max(...body.map((l) => l.length))).toBeLessThanOrEqual(width);
      expect(Math.max(...body.map((l) => l.length)), `COLUMNS=${columns}`).toBeGreaterThan(width - 15);
    }
  });

  it('tables: the default project reads "default (default)" on a terminal, its plain name through a pipe', async () => {
    expect(await onTerminal(200, ['projects', 'list'], s.env)).toMatch(/^prj_\S+ +default \(default\) +owner/m);
    const piped = await runCli(['projects', 'list'], { env: s.env });
    expect(piped.stdout).toMatch(/^prj_\S+\tdefault\towner\t/m);
  });

  it('--json=FIELDS is always a field list: one of the results\' fields selects it, another word is an unknown field', async () => {
    const score = await runCli(['search', '--json=score', 'harbour'], { env: s.env });
    expect(score.code, score.stderr).toBe(0);
    expect(JSON.parse(score.stdout).results).toEqual([{ score: expect.any(Number) }]);
    const status = await runCli(['search', '--json=status', 'harbour'], { env: s.env });
    expect(status.code).toBe(2);
    expect(status.stdout).toBe('');
    expect(status.stderr).toContain('error: unknown JSON field "status"');
  });

  it('upload --watch ends with the error, exit 1, when its project is deleted under it (so Restart=on-failure restarts it)', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-watched-'));
    writeFileSync(join(dir, 'first.txt'), 'The first note of a watched folder.\n');
    let done = false;
    const watch = runCli(['upload', dir, '--project', 'watched', '--create-project', '--sync', '--prune', '--watch', '--json'], { env: s.env, timeoutMs: 90_000 }).finally(() => (done = true));
    const project = await vi.waitFor(async () => {
      const res = await api(s.d, '/api/v1/projects', { token: s.user.apiKey });
      const id = res.body.projects.find((p: { name: string }) => p.name === 'watched')?.id as string;
      expect((await api(s.d, `/api/v1/documents?project_id=${id}`, { token: s.user.apiKey })).body.documents).toHaveLength(1);
      return id;
    }, { timeout: 30_000, interval: 200 });
    expect((await runCli(['projects', 'delete', project, '--yes'], { env: s.env })).code).toBe(0);
    // The next change makes the pass that meets the deleted project.
    for (let i = 0; !done && i < 60; i++) {
      writeFileSync(join(dir, `later-${i}.txt`), `A later note, number ${i}.\n`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const res = await watch;
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`error: project "${project}" not found`);
    const last = JSON.parse(res.stdout.trim().split('\n').at(-1)!);
    expect(last).toMatchObject({ event: 'stopped', error: { code: 'not_found' } });
  });

  /** `upload DIR --sync --prune --watch --json` into `project`, running until the test stops it: its events by name, its stderr. */
  const watch = (dir: string, project: string, ...flags: string[]) => {
    const proc = spawn(process.execPath, [BIN, 'upload', dir, '--project', project, '--create-project', '--sync', '--prune', '--watch', '--json', ...flags], {
      env: { ...process.env, ...s.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (err += b.toString()));
    return {
      proc,
      exited: new Promise<number | null>((r) => proc.once('exit', r)),
      stderr: () => err,
      events: (name: string) => out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.event === name),
      /** Once the first pass is done and the folder watched. */
      started: () => vi.waitFor(() => expect(out).toContain('"event":"watching"'), { timeout: 60_000, interval: 100 }),
    };
  };
  const paths = async (project: string) =>
    JSON.parse((await runCli(['documents', 'list', '--project', project, '--json', 'path'], { env: s.env })).stdout).documents.map((d: { path: string }) => d.path).sort();

  it('upload --watch re-reads .docsearchignore: a file it comes to name is pruned, and a new file it names is never sent', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-ignored-'));
    writeFileSync(join(dir, 'keep.txt'), 'Kept: a note about apples.\n');
    writeFileSync(join(dir, 'drop.txt'), 'Dropped: a note about pears.\n');
    const w = watch(dir, 'ignoring');
    try {
      await w.started();
      writeFileSync(join(dir, '.docsearchignore'), 'drop*.txt\n');
      await vi.waitFor(() => expect(w.events('deleted').map((e) => e.path)).toEqual(['drop.txt']), { timeout: 30_000, interval: 100 });
      writeFileSync(join(dir, 'drop-too.txt'), 'Never sent: the ignore file names it.\n');
      writeFileSync(join(dir, 'new.txt'), 'Sent: a note about quinces.\n');
      await vi.waitFor(() => expect(w.events('added').map((e) => e.path)).toContain('new.txt'), { timeout: 30_000, interval: 100 });
    } finally {
      w.proc.kill('SIGTERM');
    }
    expect(await w.exited).toBe(0);
    expect(w.events('added').map((e) => e.path)).not.toContain('drop-too.txt');
    expect(await paths('ignoring')).toEqual(['keep.txt', 'new.txt']);
  });

  it('upload --watch says a held delete once, however many files it adds after it (the count in its message changes)', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-held-'));
    for (const n of [1, 2]) writeFileSync(join(dir, `n${n}.txt`), `Held note ${n}, about plums.\n`);
    const w = watch(dir, 'held', '--max-delete', '0');
    const { events } = w;
    try {
      await w.started();
      rmSync(join(dir, 'n1.txt'));
      await vi.waitFor(() => expect(events('delete_refused')).toHaveLength(1), { timeout: 30_000, interval: 100 });
      // Each added file raises the synced count the guard's message names; the held delete is still the same one.
      for (const n of [3, 4]) {
        writeFileSync(join(dir, `n${n}.txt`), `Held note ${n}, about figs.\n`);
        await vi.waitFor(() => expect(events('added').map((e) => e.path)).toContain(`n${n}.txt`), { timeout: 30_000, interval: 100 });
        await vi.waitFor(() => expect(events('synced').length).toBeGreaterThanOrEqual(n - 1), { timeout: 30_000, interval: 100 });
      }
    } finally {
      w.proc.kill('SIGTERM');
    }
    expect(await w.exited).toBe(0);
    expect(events('delete_refused').map((e) => e.paths)).toEqual([['n1.txt']]);
    expect(w.stderr().match(/: not deleting/g)).toHaveLength(1);
    expect(await paths('held')).toEqual(['n1.txt', 'n2.txt', 'n3.txt', 'n4.txt']);
  });

  /** Runs the CLI on a pseudo-terminal (`script`), types `answer` once `prompt` shows; what it printed and its exit code. */
  const answered = async (args: string[], prompt: string, answer: string) => {
    const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
    // CI unset: the suite's own CI=true (a clean-clone run) would stop the prompt this test answers.
    const proc = spawn('script', ['-qefc', cmd, '/dev/null'], { env: { ...process.env, ...s.env, CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => proc.once('exit', r));
    await vi.waitFor(() => expect(out).toContain(prompt), { timeout: 30_000, interval: 50 });
    proc.stdin.write(answer);
    return { code: await exited, out };
  };

  it('prompts on a terminal: a revoke asks in its words and "no" keeps the key; upload offers to create a missing project', async () => {
    const made = await runCli(['keys', 'create', '--name', 'ci', '--json'], { env: s.env });
    expect(made.code, made.stderr).toBe(0);
    const key = JSON.parse(made.stdout);
    const no = await answered(['keys', 'revoke', 'ci'], `Revoke API key ci (${key.prefix}…${key.last4})? Anything using it stops working.`, 'n\r');
    expect(no.code).toBe(1);
    const keys = JSON.parse((await runCli(['keys', 'list', '--json', 'name'], { env: s.env })).stdout).keys;
    expect(keys.map((k: { name: string }) => k.name)).toContain('ci');

    const dir = mkdtempSync(join(tmpdir(), 'docsearch-offered-'));
    writeFileSync(join(dir, 'offered.txt'), 'A file for a project the upload offered to create.\n');
    const yes = await answered(['upload', join(dir, 'offered.txt'), '--project', 'offered'], `Project "offered" does not exist on ${s.d.url}. Create it?`, 'y\r');
    expect(yes.code, yes.out).toBe(0);
    const listed = await runCli(['documents', 'list', '--project', 'offered', '--json', 'filename'], { env: s.env });
    expect(JSON.parse(listed.stdout).documents).toEqual([{ filename: 'offered.txt' }]);
  });

  it('on a terminal with CI set nothing is asked, and the error says CI is why: a delete deletes nothing, login fails at once', async () => {
    const out = await onTerminal(100, ['documents', 'delete', docId], { ...s.env, CI: 'true' });
    expect(out).toContain('error: CI is set, so not asking: add --yes to delete document tide.txt\n');
    expect(out).toContain('hint: It leaves search at once and waits in the trash');
    expect((await runCli(['documents', 'show', docId], { env: s.env })).code).toBe(0);
    // Waiting for a browser would hold it for 10 minutes: the test's own time limit fails it.
    const login = await onTerminal(100, ['login', '--server', s.d.url], { ...cliEnv(null), CI: 'true' });
    expect(login).toContain(`error: CI is set, so there is no browser to log in to ${s.d.url} with\n`);
  });

  it('upload --sync --wait waits for an unchanged file whose document is still processing, and says it is ready', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-processing-'));
    // Long enough to keep the server busy for a few seconds after the first sync returns.
    const words = ['harbour', 'ferry', 'tide', 'lantern', 'orchard', 'glacier', 'violin', 'canal', 'honey', 'desert', 'pier', 'keeper'];
    const paragraph = (i: number) => Array.from({ length: 100 }, (_, j) => words[(i * 7 + j * 5 + (j >> 2)) % words.length]).join(' ');
    writeFileSync(join(dir, 'long-read.txt'), `${Array.from({ length: 60 }, (_, i) => `${paragraph(i)}.`).join('\n\n')}\n`);
    const first = await runCli(['upload', dir, '--sync', '--project', 'processing', '--create-project'], { env: s.env });
    expect(first.stderr).toContain('still processing; add --wait to wait');
    const again = await runCli(['upload', dir, '--sync', '--project', 'processing', '--wait'], { env: s.env, timeoutMs: 100_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('sync: 0 new, 0 changed, 1 unchanged');
    expect(again.stderr).toMatch(new RegExp(`^${join(dir, 'long-read.txt').replace(/[.]/g, '\\.')}: ready \\(\\d+ chunks\\)$`, 'm'));
    const listed = await runCli(['documents', 'list', '--project', 'processing', '--json', 'status'], { env: s.env });
    expect(JSON.parse(listed.stdout).documents).toEqual([{ status: 'ready' }]);
  });

  it('a document that does not exist is exit 1 with the same message from every command that takes one; beside one that does, nothing is done', async () => {
    const expected = `error: document "nope.txt" not found on ${s.d.url}\nhint: see your documents with \`docsearch documents list\`\n`;
    expect((await runCli(['projects', 'create', 'elsewhere'], { env: s.env })).code).toBe(0);
    for (const args of [
      ['documents', 'show', 'nope.txt'],
      ['documents', 'show', 'nope.txt', '--web'],
      ['documents', 'rename', 'nope.txt', 'other.txt'],
      ['documents', 'retry', 'nope.txt'],
      ['documents', 'move', 'nope.txt', '--to', 'default'],
      ['documents', 'label', 'nope.txt', 'add', 'x'],
      ['documents', 'delete', 'nope.txt', '--yes'],
      ['search', 'harbour', '--document', 'nope.txt', '--json'],
      ['search', 'harbour', '--document', 'nope.txt', '--web'],
      ['documents', 'label', docId, 'nope.txt', 'add', 'x'],
      ['documents', 'move', docId, 'nope.txt', '--to', 'elsewhere'],
      ['documents', 'delete', docId, 'nope.txt', '--yes'],
    ]) {
      const res = await runCli(args, { env: s.env });
      expect([res.code, res.stderr, res.stdout], args.join(' ')).toEqual([1, expected, '']);
    }
    // The known one was neither labelled, moved nor deleted.
    const shown = await runCli(['documents', 'show', docId, '--json', 'labels,project_id'], { env: s.env });
    expect(JSON.parse(shown.stdout)).toEqual({ labels: [], project_id: JSON.parse((await runCli(['projects', 'show', 'default', '--json'], { env: s.env })).stdout).id });
  });

  it('--max-delete without --sync --prune is a usage error, before anything is sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-maxdel-'));
    writeFileSync(join(dir, 'never-sent.txt'), 'Never sent: the flags were wrong.\n');
    for (const flags of [['--max-delete', '3'], ['--sync', '--max-delete', '3']]) {
      const res = await runCli(['upload', dir, ...flags, '--json'], { env: s.env });
      expect(res.code, flags.join(' ')).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toContain('error: --max-delete only works with --sync --prune');
    }
    const listed = await runCli(['documents', 'list', '--json', 'filename'], { env: s.env });
    expect(JSON.parse(listed.stdout).documents.map((d: { filename: string }) => d.filename)).not.toContain('never-sent.txt');
  });

  it('upload . keeps the working folder\'s own name first in each path, as naming the folder from elsewhere does', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'docsearch-dot-')), 'field-notes');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'a.txt'), 'A field note about herons.\n');
    writeFileSync(join(dir, 'sub', 'b.txt'), 'A field note about egrets.\n');
    const planned = async (cwd: string, folder: string) => {
      const res = await runCli(['upload', folder, '--recursive', '--dry-run', '--json'], { env: s.env, cwd });
      expect(res.code, res.stderr).toBe(0);
      return Object.values(JSON.parse(res.stdout).paths as Record<string, string>).sort();
    };
    const want = ['field-notes/a.txt', 'field-notes/sub/b.txt'];
    expect(await planned(dir, '.')).toEqual(want);
    expect(await planned(join(dir, 'sub'), '..')).toEqual(want);
    expect(await planned(tmpdir(), dir)).toEqual(want);
  });

  it('search --web carries --project, --document and --mode to the page, which searches as they say; a second --document is refused, not dropped', async () => {
    const web = await loggedIn(s.d, s.user);
    const opened = async (...args: string[]) => {
      const res = await runCli(['search', 'every', '--web', '--json', ...args], { env: s.env });
      expect(res.code, res.stderr).toBe(0);
      const url = new URL(JSON.parse(res.stdout).url);
      const page = await web.get(`${url.pathname}${url.search}`);
      expect(page.status).toBe(200);
      return { params: url.searchParams, page: page.text };
    };
    // "every" is in both documents of the default project: tide.txt and long.txt.
    const project = JSON.parse((await runCli(['projects', 'show', 'default', '--json'], { env: s.env })).stdout).id;
    const all = await opened('--project', 'default', '--mode', 'keyword');
    expect([all.params.getAll('project'), all.params.get('mode')]).toEqual([[project], 'keyword']);
    for (const name of ['tide.txt', 'long.txt']) expect(all.page).toContain(name);
    const one = await opened('--project', 'default', '--document', 'tide.txt', '--mode', 'keyword');
    expect(one.params.get('document')).toBe(docId);
    expect(one.page).toContain('tide.txt');
    expect(one.page).not.toContain('long.txt');
    const two = await runCli(['search', 'every', '--web', '--document', 'tide.txt', '--document', 'long.txt'], { env: s.env });
    expect(two.code).toBe(2);
    expect(two.stdout).toBe('');
    expect(two.stderr).toContain('error: --web opens the web search page, which searches within one document: got 2 --document\n');
  });

  it('--web on a terminal where no browser opens prints the URL instead of saying it opened one', async () => {
    // No desktop, no display, and a $BROWSER that fails (an SSH session): xdg-open finds no way to open the page.
    const headless = { DISPLAY: '', WAYLAND_DISPLAY: '', XDG_CURRENT_DESKTOP: '', DESKTOP_SESSION: '', KDE_FULL_SESSION: '', GNOME_DESKTOP_SESSION_ID: '', MATE_DESKTOP_SESSION_ID: '', DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/docsearch-bus', BROWSER: 'false' };
    for (const [args, path] of [[['search', 'harbour', '--web'], '/search?q=harbour'], [['documents', 'show', docId, '--web'], `/documents/${docId}`]] as const) {
      expect(await onTerminal(200, [...args], { ...s.env, ...headless }), args.join(' ')).toBe(`${s.d.url}${path}\n`);
    }
  });

  it('a folder uploaded plainly, a file changed, then synced without --prefix: the new bytes go in at the sync\'s path, the old version stays at FOLDER/… until --prune', { timeout: 180_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'docsearch-plain-then-sync-')), 'ledger');
    mkdirSync(dir);
    for (const n of ['a', 'b', 'c']) writeFileSync(join(dir, `${n}.txt`), `Ledger page ${n}, about the ${n}-ferry tolls.\n`);
    const p = ['--project', 'plainsync'];
    const cli = async (...args: string[]) => {
      const res = await runCli(['upload', dir, ...p, '--wait', '--json', ...args], { env: s.env, timeoutMs: 120_000 });
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout);
    };
    await cli('--create-project');
    writeFileSync(join(dir, 'a.txt'), 'Ledger page a, second edition, about the raised ferry tolls.\n');
    const synced = await cli('--sync');
    expect([synced.sync.added, synced.sync.removed, synced.sync.counts]).toEqual([['a.txt'], [], expect.objectContaining({ new: 1, changed: 0, unchanged: 2, deleted: 0 })]);
    expect(await paths('plainsync')).toEqual(['a.txt', 'ledger/a.txt', 'ledger/b.txt', 'ledger/c.txt']);
    const pruned = await cli('--sync', '--prune', '--force');
    expect(pruned.sync.removed).toContainEqual(expect.objectContaining({ path: 'ledger/a.txt', reason: 'pruned' }));
    expect(await paths('plainsync')).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });

  it('--sync --prune --max-delete 0: bytes moved off a replaced document whose path stays in the folder are no delete to the guard; the pass after sends nothing', { timeout: 180_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-twins-'));
    // b.txt holds a.txt's bytes: the project keeps them once, as a.txt's document.
    writeFileSync(join(dir, 'a.txt'), 'Twin notes about the herons of the estuary.\n');
    writeFileSync(join(dir, 'b.txt'), 'Twin notes about the herons of the estuary.\n');
    writeFileSync(join(dir, 'c.txt'), 'Other notes about the swifts over the town.\n');
    const sync = async () => {
      const res = await runCli(['upload', dir, '--sync', '--prune', '--max-delete', '0', '--project', 'twins', '--create-project', '--wait', '--json'], { env: s.env, timeoutMs: 120_000 });
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout).sync;
    };
    await sync();
    // a.txt's new bytes replace its document, which b.txt's bytes would go with: b.txt moves to a document of its own.
    writeFileSync(join(dir, 'a.txt'), 'Notes about the herons, second edition.\n');
    const edited = await sync();
    expect([edited.added, edited.replaced, edited.removed]).toEqual([['b.txt'], ['a.txt'], [expect.objectContaining({ path: 'a.txt', reason: 'moved' })]]);
    expect(await paths('twins')).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect((await sync()).counts).toMatchObject({ new: 0, changed: 0, unchanged: 3, deleted: 0 });
  });

  it('documents rename keeps a synced document\'s path: the next sync finds it unchanged and sends nothing', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-renamed-'));
    writeFileSync(join(dir, 'minutes.txt'), 'Minutes of the harbour board, about the new crane.\n');
    const sync = async () => {
      const res = await runCli(['upload', dir, '--sync', '--prune', '--project', 'renamed', '--create-project', '--wait', '--json'], { env: s.env, timeoutMs: 100_000 });
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout).sync.counts;
    };
    expect(await sync()).toMatchObject({ new: 1 });
    const [doc] = JSON.parse((await runCli(['documents', 'list', '--project', 'renamed', '--json', 'id'], { env: s.env })).stdout).documents;
    const renamed = await runCli(['documents', 'rename', doc.id, 'Board minutes.txt'], { env: s.env });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(await sync()).toMatchObject({ new: 0, changed: 0, unchanged: 1, deleted: 0 });
    const listed = JSON.parse((await runCli(['documents', 'list', '--project', 'renamed', '--json', 'id,filename,path'], { env: s.env })).stdout).documents;
    expect(listed).toEqual([{ id: doc.id, filename: 'Board minutes.txt', path: 'minutes.txt' }]);
  });

  it('--json FIELDS: trash restore|purge, saved-searches delete and upload select from their object, error allowed (null); documents move|label select each document\'s fields and keep failed', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-fields-'));
    for (const n of [1, 2]) writeFileSync(join(dir, `fields-${n}.txt`), `Fields note ${n}, about the weather vane.\n`);
    const json = async (...args: string[]) => {
      const res = await runCli(args, { env: s.env, timeoutMs: 100_000 });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      return JSON.parse(res.stdout);
    };
    const up = await json('upload', dir, '--project', 'fields', '--create-project', '--wait', '--json', 'documents,error');
    expect(Object.keys(up)).toEqual(['documents', 'error']);
    expect(up.error).toBeNull();
    const [a, b] = (up.documents as { id: string }[]).map((d) => d.id);
    expect(await json('documents', 'move', a!, '--to', 'default', '--json', 'id')).toEqual({ documents: [{ id: a }], failed: [] });
    expect(await json('documents', 'label', a!, 'add', 'vane', '--json', 'labels')).toEqual({ documents: [{ labels: ['vane'] }], failed: [] });
    await json('documents', 'delete', a!, b!, '--yes', '--json');
    expect(await json('trash', 'restore', a!, '--json', 'restored,error')).toEqual({ restored: [a], error: null });
    expect(await json('trash', 'purge', b!, '--yes', '--json', 'purged,error')).toEqual({ purged: [b], error: null });
    const saved = await json('search', 'weather vane', '--save', 'vanes', '--json', 'score');
    expect(saved.results.length).toBeGreaterThan(0);
    const id = (await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey })).body.saved_searches.find((v: { name: string }) => v.name === 'vanes').id;
    expect(await json('saved-searches', 'delete', 'vanes', '--yes', '--json', 'deleted,error')).toEqual({ deleted: [id], error: null });
  });

  describe('a listing that fails on its third page', () => {
    let relay: Server;
    let url: string;
    beforeAll(async () => {
      // Pages of one document (the limit rewritten on the way), and each listing's third page answered with a 500.
      let page = 0;
      relay = createServer(async (req, res) => {
        const target = new URL(req.url!, s.d.url);
        if (target.pathname === '/api/v1/documents') {
          target.searchParams.set('limit', '1');
          page = target.searchParams.has('cursor') ? page + 1 : 1;
          if (page === 3) {
            res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'internal_error', message: 'internal error', request_id: 'req_test' } }));
            return;
          }
        }
        const answer = await fetch(target, { headers: { authorization: req.headers.authorization ?? '' } });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
      });
      await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
      for (const name of ['b.txt', 'c.txt']) {
        const dir = mkdtempSync(join(tmpdir(), 'docsearch-pages-'));
        writeFileSync(join(dir, name), `The ${name} page of a listing three pages long.\n`);
        expect((await runCli(['upload', join(dir, name), '--wait'], { env: s.env, timeoutMs: 120_000 })).code).toBe(0);
      }
      return () => new Promise<void>((r) => relay.close(() => r()));
    }, 180_000);

    it('prints nothing: exit 1, the error on stderr, plain and --json', async () => {
      for (const json of [[], ['--json']]) {
        const res = await runCli(['documents', 'list', ...json], { env: { ...s.env, DOCSEARCH_URL: url } });
        expect(res.code, res.stderr).toBe(1);
        expect(res.stdout).toBe('');
        expect(res.stderr).toMatch(/^error: .*internal error/m);
      }
    });
  });
});

describe('the GitHub Action on a runner without docsearch', () => {
  it('fails at once saying to install the light client, and never fetches docsearch-cli by name (unclaimed on npm) with the key', () => {
    // A PATH of the tools the step uses and an npx that records being called: no docsearch anywhere on it.
    const bin = mkdtempSync(join(tmpdir(), 'docsearch-runner-'));
    for (const tool of ['mktemp', 'rm']) symlinkSync(execFileSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), join(bin, tool));
    const called = join(bin, 'npx-called');
    writeFileSync(join(bin, 'npx'), `#!/bin/sh\necho "$@" > ${called}\n`);
    chmodSync(join(bin, 'npx'), 0o755);
    let code = 0;
    let stdout = '';
    try {
      stdout = execFileSync('/bin/bash', [join(REPO, 'scripts/action-sync.sh')], {
        cwd: bin,
        encoding: 'utf8',
        env: { PATH: bin, CI: 'true', GITHUB_WORKSPACE: bin, INPUT_SERVER: 'https://search.example.com', INPUT_TOKEN: 'dsk_secret', INPUT_PROJECT: 'handbook' },
      });
    } catch (err) {
      ({ status: code, stdout } = err as { status: number; stdout: string });
    }
    expect(existsSync(called)).toBe(false);
    expect(code).toBe(2);
    expect(stdout).toContain('::error title=docsearch sync::no docsearch on PATH: install the light client in an earlier step');
  });
});

describe('search output with a reranker', () => {
  it('each result says "reranked 0.87" beside its ranks; --json has that score under scores.rerank', { timeout: 180_000 }, async () => {
    // A /v1/rerank server (the Cohere/Jina wire format) that scores every passage 0.87.
    const reranker = createServer((req, res) => {
      let body = '';
      req.on('data', (b: Buffer) => (body += b.toString()));
      req.on('end', () => {
        const { documents } = JSON.parse(body) as { documents: string[] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: documents.map((_, index) => ({ index, relevance_score: 0.87 })) }));
      });
    });
    await new Promise<void>((r) => reranker.listen(0, '127.0.0.1', r));
    const d = await startDaemon({ args: ['--reranker', `http:http://127.0.0.1:${(reranker.address() as AddressInfo).port}`], timeoutMs: 60_000 });
    try {
      const env = cliEnv(d, { DOCSEARCH_TOKEN: (await addUser(d)).apiKey });
      const dir = mkdtempSync(join(tmpdir(), 'docsearch-reranked-'));
      writeFileSync(join(dir, 'tide.txt'), 'Tide tables list the high water times for the harbour every day.\n');
      expect((await runCli(['upload', join(dir, 'tide.txt'), '--wait'], { env, timeoutMs: 120_000 })).code).toBe(0);
      const plain = await runCli(['search', 'high water harbour', '--limit', '1'], { env });
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout.split('\n')[0]).toMatch(/^1\. tide\.txt {2}\[default\] vector #1 · keyword #1 · reranked 0\.87$/);
      const json = await runCli(['search', 'high water harbour', '--limit', '1', '--json'], { env });
      expect(JSON.parse(json.stdout).results[0].scores.rerank).toBe(0.87);
    } finally {
      await d.stop();
      removeDir(d.dataDir);
      await new Promise<void>((r) => reranker.close(() => r()));
    }
  });
});
