import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, BIN, REPO, runCli } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliEnv, cliSuite } from './cli-env.js';

const FILES = { bash: 'completions/docsearch.bash', zsh: 'completions/_docsearch', fish: 'completions/docsearch.fish' } as const;

/** The bash script as installed: `docsearch` on PATH is the built binary. */
function bashComplete(words: string[], env: Record<string, string> = cliEnv(null)): string {
  const bin = mkdtempSync(join(tmpdir(), 'docsearch-path-'));
  symlinkSync(BIN, join(bin, 'docsearch'));
  const script = `source ${join(REPO, FILES.bash)}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _docsearch; echo "\${COMPREPLY[*]}"`;
  return execFileSync('bash', ['-c', script], { encoding: 'utf8', env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH}` } }).trim();
}

describe('docsearch completion', () => {
  it.each(Object.entries(FILES))('%s: the committed script matches `docsearch completion` (regenerate with `npm run completions`)', async (shell, file) => {
    const res = await runCli(['completion', shell], { env: cliEnv(null) });
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe(readFileSync(join(REPO, file), 'utf8'));
  });

  it('bash: completes commands, subcommands, per-command and global options', { timeout: 60_000 }, () => {
    expect(bashComplete(['docsearch', 'pro'])).toBe('projects');
    expect(bashComplete(['docsearch', 'projects', ''])).toBe('list create show rename settings share unshare members transfer delete');
    expect(bashComplete(['docsearch', 'upload', '--w'])).toBe('--wait --watch');
    expect(bashComplete(['docsearch', 'keys', 'revoke', '--y'])).toBe('--yes');
    expect(bashComplete(['docsearch', '--ser'])).toBe('--server');
    // Global flags complete under a subcommand too.
    expect(bashComplete(['docsearch', 'search', '--jq'])).toBe('--jq');
  });

  it('bash: enum values of a flag, not file names (search --mode <TAB>)', { timeout: 60_000 }, () => {
    expect(bashComplete(['docsearch', 'search', '--mode', ''])).toBe('hybrid vector keyword');
    expect(bashComplete(['docsearch', 'search', 'x', '--mode', 'v'])).toBe('vector');
    expect(bashComplete(['docsearch', 'documents', 'list', '--status', ''])).toBe('queued processing ready failed');
    expect(bashComplete(['docsearch', 'completion', ''])).toBe('bash zsh fish');
    // #60: the filter flags' values — every document type, and the facets.
    expect(bashComplete(['docsearch', 'search', 'x', '--type', 'mark'])).toBe('markdown');
    expect(bashComplete(['docsearch', 'documents', 'list', '--type', 'ep'])).toBe('epub');
    expect(bashComplete(['docsearch', 'search', 'x', '--facets', ''])).toBe('type project uploaded_by year label language');
  });

  it('operator commands complete their own flags (loaded only for them)', async () => {
    const res = await runCli(['__complete', 'serve', '--por'], { env: cliEnv(null) });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^--port\t/);
  });

  it('project names: silent when nothing listens, and gives up by itself on a server that never answers', async () => {
    const refused = await runCli(['__complete', 'search', '--project', ''], { env: cliEnv(null, { DOCSEARCH_URL: 'http://127.0.0.1:9', DOCSEARCH_TOKEN: 'dsk_x' }) });
    expect(refused).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // A server that accepts and never answers: only the lookup's own limit (1.5 s) can end the completion, asking once.
    const held: Socket[] = [];
    const asked: string[] = [];
    const mute = createServer((s) => {
      held.push(s);
      s.once('data', (b: Buffer) => asked.push(b.toString().split('\r\n')[0]!));
    });
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(mute.address() as AddressInfo).port}`;
      const started = performance.now();
      const res = await runCli(['__complete', 'search', '--project', ''], { env: cliEnv(null, { DOCSEARCH_URL: url, DOCSEARCH_TOKEN: `dsk_${'a'.repeat(43)}` }), timeoutMs: 50_000 });
      expect(res).toMatchObject({ code: 0, stdout: '', stderr: '' });
      // By itself: the process start and the lookup's 1.5 s, with room for a busy machine, far from the test's limit.
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(asked).toEqual(['GET /api/v1/projects?limit=100 HTTP/1.1']);
    } finally {
      for (const s of held) s.destroy();
      await new Promise((r) => mute.close(r));
    }
  });

  it('an unknown shell is a usage error', async () => {
    const res = await runCli(['completion', 'powershell'], { env: cliEnv(null) });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe("error: command-argument value 'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.\n");
  });
});

describe('docsearch completion: values a real daemon holds', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });

  it('documents: the newest are offered, past the first page of the oldest', { timeout: 120_000 }, async () => {
    // One more than a lookup's page (100): the API lists oldest first unless asked, which left the newest out.
    const files = Array.from({ length: 101 }, (_, i) => ({ name: `note-${String(i).padStart(3, '0')}.txt`, bytes: Buffer.from(`Note number ${i}.`) }));
    let newest = '';
    for (let i = 0; i < files.length; i += 20) {
      const up = await uploadFiles(s.d, s.user.apiKey, files.slice(i, i + 20));
      expect(up.status, JSON.stringify(up.body).slice(0, 300)).toBeLessThan(300);
      newest = (up.body.documents as { id: string }[]).at(-1)!.id;
    }
    const res = await runCli(['__complete', 'documents', 'show', ''], { env: s.env });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout.split('\n').filter(Boolean)).toHaveLength(100);
    expect(res.stdout).toContain(`${newest}\tnote-100.txt`);
  });

  it('--label: the labels of every project, asked a few projects at a time (no listener warning at 11 projects)', { timeout: 120_000 }, async () => {
    for (let i = 0; i < 11; i++) {
      const project = await api(s.d, '/api/v1/projects', { token: s.user.apiKey, body: { name: `shelf-${i}` } });
      expect(project.status, JSON.stringify(project.body)).toBe(201);
      const label = await api(s.d, `/api/v1/projects/${project.body.id}/labels`, { token: s.user.apiKey, body: { name: `tag-${i}` } });
      expect(label.status, JSON.stringify(label.body)).toBe(201);
    }
    const res = await runCli(['__complete', 'search', '--label', ''], { env: s.env });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]).sort()).toEqual(Array.from({ length: 11 }, (_, i) => `tag-${i}`).sort());
  });

  it('--meta: the metadata keys of recent documents, as key=', { timeout: 60_000 }, async () => {
    const up = await uploadFiles(s.d, s.user.apiKey, [{ name: 'release.txt', bytes: Buffer.from('Release notes.') }], { metadata: JSON.stringify({ repo: 'docsearch', version: '1.2' }) });
    expect(up.status, JSON.stringify(up.body)).toBeLessThan(300);
    const res = await runCli(['__complete', 'documents', 'list', '--meta', ''], { env: s.env });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0])).toEqual(['repo=', 'version=']);
  });
});
