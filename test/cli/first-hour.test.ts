import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { cliEnv, cliSuite } from './cli-env.js';

/** Issue 44, the CLI's part: what a new user trips on in the first hour (defects 3, 9 and the CLI items of 11). */
describe('the CLI in the first hour (issue 44)', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  cliSuite((s) => ({ d, user, env } = s));
  const PASTE_HINT = 'hint: paste the whole key, as shown once when it was created (dsk_ and 43 letters and digits); the Settings page lists only its first and last characters\n';

  it('3: a malformed key is refused by its shape, before any request, with exit 4 — not blamed on the network', async () => {
    // The masked form the Settings table shows, and a whole key pasted with a typographic quote after it.
    const masked = `${user.apiKey.slice(0, 8)}…${user.apiKey.slice(-4)}`;
    for (const [input, bad] of [
      [masked, '…'],
      [`${user.apiKey}”`, '”'],
    ] as const) {
      const home = cliEnv(null);
      const res = await runCli(['login', '--server', d.url, '--with-token'], { env: home, input: `${input}\n` });
      expect(res.stderr).toBe(`error: that is not a valid key (it contains '${bad}')\n${PASTE_HINT}`);
      expect(res.code).toBe(4);
      expect(() => readFileSync(join(home.XDG_CONFIG_HOME!, 'docsearch', 'credentials.json'))).toThrow();
    }
    // The same key with a character short is told by its length.
    const short = await runCli(['login', '--server', d.url, '--with-token'], { env: cliEnv(null), input: user.apiKey.slice(0, -1) });
    expect(short.stderr).toContain('error: that is not a valid key (an API key is dsk_ and 43 letters and digits; this one has 42 after dsk_)\n');
    expect(short.code).toBe(4);

    // Siblings: --token, DOCSEARCH_TOKEN, and a saved login damaged on disk.
    const flag = await runCli(['projects', '--token', masked], { env: cliEnv(d) });
    expect(flag.stderr).toBe(`error: --token: that is not a valid key (it contains '…')\n${PASTE_HINT}`);
    expect(flag.code).toBe(4);
    const fromEnv = await runCli(['documents', 'list'], { env: cliEnv(d, { DOCSEARCH_TOKEN: `${user.apiKey}”` }) });
    expect(fromEnv.stderr).toBe(`error: DOCSEARCH_TOKEN: that is not a valid key (it contains '”')\n${PASTE_HINT}`);
    expect(fromEnv.code).toBe(4);

    const home = cliEnv(null);
    expect((await runCli(['login', '--server', d.url, '--with-token'], { env: home, input: user.apiKey })).code).toBe(0);
    const file = join(home.XDG_CONFIG_HOME!, 'docsearch', 'credentials.json');
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    saved.servers[d.url].access_token = `${user.apiKey.slice(0, 20)}\u00e9${user.apiKey.slice(21)}`;
    writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
    const damaged = await runCli(['projects'], { env: { ...home, DOCSEARCH_URL: '' } });
    expect(damaged.stderr).toBe(`error: the login saved for ${d.url} is damaged (it contains 'é')\nhint: run \`docsearch login --server ${d.url}\` again\n`);
    expect(damaged.code).toBe(4);
    const status = await runCli(['auth', 'status'], { env: { ...home, DOCSEARCH_URL: '' } });
    expect(status.stdout).toContain(`rejected: the login saved for ${d.url} is damaged (it contains 'é')`);
    expect(status.code).toBe(1);
  });

  it('9: documents list names each document\'s project, newest first like the web; documents show names the project', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-projects-'));
    writeFileSync(join(dir, 'notes.txt'), 'Meeting notes about the harbour crane schedule.\n');
    writeFileSync(join(dir, 'later.txt'), 'Later notes about the lighthouse repairs.\n');
    const first = await runCli(['upload', join(dir, 'notes.txt'), '--project', 'Harbour', '--create-project', '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    await new Promise((r) => setTimeout(r, 20));
    const second = await runCli(['upload', join(dir, 'notes.txt'), join(dir, 'later.txt'), '--project', 'Lighthouse', '--create-project', '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    const ids = [...JSON.parse(first.stdout).documents, ...JSON.parse(second.stdout).documents].map((x: { id: string }) => x.id);

    const res = await runCli(['documents', 'list'], { env });
    expect(res.code, res.stderr).toBe(0);
    const rows = res.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    const mine = rows.filter((r) => ids.includes(r[0]!));
    // The same file in two projects is told apart by the PROJECT column; the newest upload comes first.
    expect(mine.map((r) => [r[1], r[2]])).toEqual([
      ['later.txt', 'Lighthouse'],
      ['notes.txt', 'Lighthouse'],
      ['notes.txt', 'Harbour'],
    ]);
    const oldest = await runCli(['documents', 'list', '--sort', 'uploaded'], { env });
    expect(oldest.stdout.trimEnd().split('\n').map((l) => l.split('\t')[0]).filter((id) => ids.includes(id!))).toEqual([ids[0], ids[1], ids[2]]);

    const show = await runCli(['documents', 'show', ids[0]!], { env });
    const projectId = JSON.parse(first.stdout).documents[0].project_id;
    expect(show.stdout).toContain(`project\tHarbour (${projectId})\n`);
  });

  it('11: "1 chunk", not "1 chunks"; counts agree with their nouns', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-plural-'));
    writeFileSync(join(dir, 'one.txt'), 'A single short paragraph is one chunk.\n');
    const res = await runCli(['upload', join(dir, 'one.txt'), '--wait'], { env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`${join(dir, 'one.txt')}: ready (1 chunk)\n`);
    expect(res.stderr).toContain('uploading 1 file to your default project');
    expect(res.stderr).toContain('done: 1 file ready to search\n');
    expect(res.stderr).not.toContain('(s)');
  });

  it('11: upload of a single unsupported file says the type is not supported, not "--recursive"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-epub-'));
    writeFileSync(join(dir, 'handbook.mobi'), 'BOOKMOBI not really');
    const res = await runCli(['upload', join(dir, 'handbook.mobi')], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `skipped ${join(dir, 'handbook.mobi')}: unsupported file type (docsearch reads PDF, Word, OpenDocument, PowerPoint, Excel, EPUB, RTF, CSV, Markdown, HTML, e-mail, images and plain text)\n` +
        'error: nothing to upload: that file type is not supported\n' +
        'hint: docsearch reads PDF, Word, OpenDocument, PowerPoint, Excel, EPUB, RTF, CSV, Markdown, HTML, e-mail, images and plain text: convert the file to one of them first\n',
    );
    expect(res.stderr).not.toContain('--recursive');
  });

  it('11: a legacy Office file (.doc) is sent, for the server to read or refuse, not skipped as unsupported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-doc-'));
    writeFileSync(join(dir, 'ledger.doc'), readFileSync(join(REPO, 'test/fixtures/formats/ledger.doc')));
    const res = await runCli(['upload', join(dir, 'ledger.doc')], { env });
    expect(res.stderr).not.toContain('skipped');
    expect(res.stderr).toMatch(/ledger\.doc: (uploaded as doc_\w+|rejected: .*not a type docsearch reads)/);
  });

  it('11: --server with a path the server does not serve says the URL looks wrong and how to fix it', async () => {
    const res = await runCli(['projects', '--server', `${d.url}/typo`], { env });
    expect(res.stderr).toBe(
      `error: the server URL ${d.url}/typo looks wrong: it answered 404 for the API path /api/v1/projects\n` +
        `hint: give the server's root address (did you mean ${d.url}?): fix --server, DOCSEARCH_URL, or log in again at the right address with \`docsearch login --server URL\`\n`,
    );
    expect(res.code).toBe(1);
    // A 404 for something that does not exist is still about that thing.
    const missing = await runCli(['documents', 'show', 'doc_nope'], { env });
    expect(missing.stderr).toContain(`error: document "doc_nope" not found on ${d.url}\n`);
    expect((await api(d, '/api/v1/projects', { token: user.apiKey })).status).toBe(200);
  });
});
