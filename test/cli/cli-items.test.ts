import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { cliEnv, cliSuite, unusedUrl } from './cli-env.js';

const run = promisify(execFile);

describe('small CLI defects of issue 21 (item 9) and progress in documents list', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  cliSuite((s) => ({ d, user, env } = s));

  it('--json with a misspelt field (no "=") is an unknown field, with a suggestion', async () => {
    const res = await runCli(['projects', '--json', 'nme'], { env });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe('error: unknown JSON field "nme" (did you mean "name"?)\nhint: available fields: id, name, description, metadata, is_default, document_count, chunk_count, size_bytes, created_at, updated_at, role, owner, language, ocr_languages\n');
    // A search for words after --json is still a search.
    const search = await runCli(['search', '--json', 'vpn setup'], { env });
    expect(search.code, search.stderr).toBe(0);
  });

  it('--json takes the next word as fields only when it is one of the command\'s own, and never a positional the command still lacks', async () => {
    // `status` is a field of documents, not of search's results: it is what to look for.
    const search = await runCli(['search', '--json', 'status'], { env });
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout)).toHaveProperty('results');
    // `pages` is a field of documents, but upload still lacks its paths: it is the folder to upload.
    const cwd = mkdtempSync(join(tmpdir(), 'docsearch-json-word-'));
    mkdirSync(join(cwd, 'pages'));
    writeFileSync(join(cwd, 'pages', 'about.txt'), 'About this site.\n');
    const bin = fileURLToPath(new URL('../../bin/docsearch', import.meta.url));
    const upload = await run(process.execPath, [bin, 'upload', '--json', 'pages', '--dry-run'], { cwd, env: { ...process.env, ...env } }).catch((e: { code: number; stderr: string; stdout: string }) => e);
    expect(upload.stderr).toBe('');
    expect(JSON.parse(upload.stdout).would_upload).toEqual(['pages/about.txt']);
    // A command's own field still is one once its positional is given (else a second query word: a usage error).
    const fields = await runCli(['search', 'about', '--json', 'score'], { env });
    expect(fields.code, fields.stderr).toBe(0);
    expect(JSON.parse(fields.stdout)).toHaveProperty('results');
  });

  it('documents delete names every unknown id and deletes nothing; show names it too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-ids-'));
    writeFileSync(join(dir, 'kept.txt'), 'A document that must survive a mistyped delete.\n');
    const up = await runCli(['upload', join(dir, 'kept.txt'), '--json'], { env });
    const id = JSON.parse(up.stdout).documents[0].id;
    const res = await runCli(['documents', 'delete', id, 'doc_nope1', 'doc_nope2', '--yes'], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`error: documents "doc_nope1", "doc_nope2" not found on ${d.url}\nhint: see your documents with \`docsearch documents list\`\n`);
    expect((await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).status).toBe(200);
    const show = await runCli(['documents', 'show', 'doc_nope3'], { env });
    expect(show.code).toBe(1);
    expect(show.stderr).toContain(`error: document "doc_nope3" not found on ${d.url}\n`);
  });

  it('a saved server that no longer answers (a daemon restarted with --port 0) says where it came from and how to point elsewhere', async () => {
    const home = cliEnv(null);
    expect((await runCli(['login', '--server', d.url, '--with-token'], { env: home, input: user.apiKey })).code).toBe(0);
    // The daemon moved: what `login` saved now names a port nothing listens on.
    const gone = await unusedUrl();
    const dir = join(home.XDG_CONFIG_HOME!, 'docsearch');
    writeFileSync(join(dir, 'client.json'), JSON.stringify({ default_server: gone }));
    const creds = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8'));
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ servers: { [gone]: creds.servers[d.url] } }), { mode: 0o600 });
    const res = await runCli(['projects'], { env: { ...home, DOCSEARCH_URL: '' } });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `error: could not reach ${gone} (ECONNREFUSED) — is \`docsearch serve\` running?\n` +
        `hint: ${gone} is the server you last logged in to (saved by \`docsearch login\`); if it moved, log in at its new address with \`docsearch login --server URL\`, or pass --server URL (or set DOCSEARCH_URL)\n`,
    );
  });

  it('documents list shows how far processing is and how many are still being indexed', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-progress-'));
    const paragraphs = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} of the long ledger describes cargo manifest entry ${i * 7} and its harbour fees.`);
    writeFileSync(join(dir, 'ledger.txt'), paragraphs.join('\n\n'));
    expect((await runCli(['upload', join(dir, 'ledger.txt'), '--project', 'slow', '--create-project'], { env })).code).toBe(0);
    const res = await runCli(['documents', 'list', '--project', 'slow'], { env });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/\tledger\.txt\tslow\t(queued|processing \d+%)\t/);
    expect(res.stderr).toContain('still indexing 1 document: not searchable until ready');
    const projects = await runCli(['projects'], { env });
    expect(projects.stderr).toContain('still indexing 1 document (1 in slow): not searchable until ready');
    const json = await runCli(['documents', 'list', '--project', 'slow', '--json', 'status'], { env });
    expect(json.stderr).toBe('');
    expect((await runCli(['upload', join(dir, 'ledger.txt'), '--project', 'slow', '--wait'], { env, timeoutMs: 200_000 })).code).toBe(0);
    expect((await runCli(['documents', 'list', '--project', 'slow'], { env })).stderr).toBe('');
    expect((await runCli(['projects'], { env })).stderr).toBe('');
  });
});
