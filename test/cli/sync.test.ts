import { exec } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { cliEnv } from './cli-env.js';

const TOPICS = [
  'lighthouse lenses', 'harbour tides', 'orchard pruning', 'glacier melt', 'violin varnish', 'bread sourdough', 'comet tails',
  'canal locks', 'honey bees', 'desert dunes', 'railway signals', 'coral reefs', 'paper marbling', 'volcano vents', 'kite flying',
  'cheese caves', 'moss gardens', 'salt flats', 'clock springs', 'river deltas', 'owl pellets',
];

/** One distinct text per file; every version of f05 carries the word "quokka", found by keyword search. */
const text = (i: number, version = 1) =>
  `File ${i} is about ${TOPICS[i - 1]}. ${i === 5 ? `The quokka note, version ${version === 1 ? 'one' : 'two with zebras'}.` : ''} ` +
  `It has enough words to form a chunk of its own about ${TOPICS[i - 1]} and nothing else.\n`;
const name = (i: number) => `f${String(i).padStart(2, '0')}.txt`;

describe('upload --sync: the project mirrors a folder', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  }, { cleanExit: false, setupTimeoutMs: 60_000 });

  // 20 paths in all: 19 files at first (two in a subfolder); then one changes, one goes, one comes.
  it('change one file, delete another, add one → 1 replaced, 1 pruned, 1 added, 17 untouched; search never shows both versions or neither', { timeout: 600_000 }, async () => {
    const work = mkdtempSync(join(tmpdir(), 'docsearch-sync-'));
    const dir = join(work, 'docs');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    for (let i = 1; i <= 19; i++) writeFileSync(join(dir, i > 17 ? `sub/${name(i)}` : name(i)), text(i));
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const sync = async () => {
      const res = await runCli(['upload', dir, '--sync', '--prune', '--project', 'mirror', '--create-project', '--wait', '--json'], { env, timeoutMs: 400_000 });
      expect(res.stderr).toBe('');
      expect(res.code).toBe(0);
      return JSON.parse(res.stdout);
    };

    const first = await sync();
    expect(first.sync.added).toHaveLength(19);
    expect(first.sync.added).toContain('sub/f19.txt');
    expect(first.documents.every((x: { status: string; path: string }) => x.status === 'ready' && x.path)).toBe(true);
    const projectId = first.documents[0].project_id;
    const before = new Map<string, string>(first.documents.map((x: { path: string; id: string }) => [x.path, x.id]));

    // The README's CI command on the unchanged folder uploads nothing (npx from a project that depends on docsearch).
    writeFileSync(join(work, 'package.json'), '{"name":"ci-project","private":true}\n');
    mkdirSync(join(work, 'node_modules/.bin'), { recursive: true });
    symlinkSync(BIN, join(work, 'node_modules/.bin/docsearch'));
    const ci = await new Promise<{ code: number; stderr: string; stdout: string }>((resolve) => {
      exec(`DOCSEARCH_URL=${d.url} DOCSEARCH_TOKEN=${user.apiKey} npx docsearch upload docs/ --project mirror --sync --prune --wait`, {
        cwd: work,
        env: { ...process.env, ...cliEnv(null), npm_config_offline: 'true', npm_config_update_notifier: 'false' },
        timeout: 240_000,
      }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
    });
    expect(ci.code).toBe(0);
    expect(ci.stderr).toContain('sync: 0 new, 0 changed, 19 unchanged, 0 to delete');
    expect(ci.stderr).not.toContain('uploading');
    expect(ci.stdout).toBe('');

    // Change f05, delete f10, add f20.
    writeFileSync(join(dir, name(5)), text(5, 2));
    rmSync(join(dir, name(10)));
    writeFileSync(join(dir, name(20)), text(20));

    // Search for the changed file's word while the sync runs: exactly one version must answer, every time.
    let polling = true;
    const seen: string[][] = [];
    const poller = (async () => {
      while (polling) {
        const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'quokka', mode: 'keyword', project_ids: [projectId], limit: 10 } });
        expect(res.status).toBe(200);
        seen.push(res.body.results.filter((r: { document: { filename: string } }) => r.document.filename === 'f05.txt').map((r: { document: { id: string } }) => r.document.id));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const second = await sync();
    // A few more searches after the swap, then stop.
    await new Promise((r) => setTimeout(r, 500));
    polling = false;
    await poller;

    expect(second.sync.added).toEqual(['f20.txt']);
    expect(second.sync.replaced).toEqual(['f05.txt']);
    expect(second.sync.removed).toEqual([{ id: before.get('f10.txt'), path: 'f10.txt', reason: 'pruned' }]);
    expect(second.sync.unchanged).toHaveLength(17);
    const newF05 = second.documents.find((x: { path: string }) => x.path === 'f05.txt').id;
    expect(newF05).not.toBe(before.get('f05.txt'));

    expect(seen.length).toBeGreaterThan(3);
    for (const ids of seen) expect(ids).toHaveLength(1); // never both, never neither
    expect(seen[0]).toEqual([before.get('f05.txt')]);
    expect(seen.at(-1)).toEqual([newF05]);

    // The project now holds exactly the folder: 17 untouched documents kept their ids.
    const docs = await api(d, `/api/v1/documents?project_id=${projectId}&limit=100`, { token: user.apiKey });
    const byPath = new Map<string, string>(docs.body.documents.map((x: { path: string; id: string }) => [x.path, x.id]));
    expect([...byPath.keys()].sort()).toEqual([...[...Array(17).keys()].map((i) => name(i + 1)).filter((n) => n !== 'f10.txt'), 'f20.txt', 'sub/f18.txt', 'sub/f19.txt'].sort());
    const untouched = [...before.keys()].filter((p) => p !== 'f05.txt' && p !== 'f10.txt');
    expect(untouched).toHaveLength(17);
    for (const p of untouched) expect(byPath.get(p), p).toBe(before.get(p));
    // The old version leaves for good (its chunks, row and file) once the grace period for searches begun before the swap is over.
    await expect.poll(async () => (await api(d, `/api/v1/documents/${before.get("f05.txt")}`, { token: user.apiKey })).status, { timeout: 40_000, interval: 1000 }).toBe(404);
    const byPathFilter = await api(d, `/api/v1/documents?project_id=${projectId}&path=f05.txt`, { token: user.apiKey });
    expect(byPathFilter.body.documents.map((x: { id: string }) => x.id)).toEqual([newF05]);
  });

  it('API: new bytes at a path replace the document when ready; a new version that fails leaves the old one searchable', { timeout: 300_000 }, async () => {
    const upload = async (body: string | Buffer, path: string) => {
      const form = new FormData();
      form.append('paths', JSON.stringify([path]));
      form.append('file', new Blob([body]), 'manual.txt');
      const res = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
      return { status: res.status, body: (await res.json()) as { documents: Array<{ id: string; status: string; path: string; duplicate?: boolean }> } };
    };
    const v1 = await upload('The manual says the pelican valve is opened clockwise.\n', 'manual');
    expect(v1.body.documents[0]).toMatchObject({ status: 'ready', path: 'manual' });
    const same = await upload('The manual says the pelican valve is opened clockwise.\n', 'manual');
    expect(same.body.documents[0]).toMatchObject({ id: v1.body.documents[0]!.id, duplicate: true });
    // PDF bytes that cannot be parsed: the new version fails.
    const broken = await upload('%PDF-1.7\nthis is not really a PDF at all\n%%EOF\n', 'manual');
    expect(broken.body.documents[0]).toMatchObject({ status: 'failed', path: 'manual' });
    const search = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'pelican valve', mode: 'keyword' } });
    expect(search.body.results.map((r: { document: { id: string } }) => r.document.id)).toEqual([v1.body.documents[0]!.id]);
    expect((await api(d, `/api/v1/documents/${v1.body.documents[0]!.id}`, { token: user.apiKey })).body.status).toBe('ready');

    // Bad paths are refused by name.
    const form = new FormData();
    form.append('paths', JSON.stringify(['../etc/passwd']));
    form.append('file', new Blob(['x y z']), 'a.txt');
    const bad = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe('paths[0]: must be a relative path like "guides/setup.md" (got "../etc/passwd")');
  });

  it('--prune deletes nothing while part of the folder cannot be read', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-sync-unreadable-'));
    writeFileSync(join(dir, 'keep.txt'), 'The keep file talks about lantern oil.\n');
    writeFileSync(join(dir, 'gone.txt'), 'The gone file talks about anchor chains.\n');
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const args = ['upload', dir, '--sync', '--prune', '--project', 'partial', '--create-project', '--wait'];
    expect((await runCli(args, { env, timeoutMs: 240_000 })).code).toBe(0);
    rmSync(join(dir, 'gone.txt'));
    symlinkSync('loop.txt', join(dir, 'loop.txt')); // unreadable even for root
    const res = await runCli(args, { env, timeoutMs: 240_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('warning: not pruning: some files or folders could not be read');
    const list = await runCli(['documents', 'list', '--project', 'partial', '--json', 'path'], { env });
    expect(JSON.parse(list.stdout).documents.map((x: { path: string }) => x.path).sort()).toEqual(['gone.txt', 'keep.txt']);
  });

  it('a file moved to another project and synced again warns that it makes a second copy (#53 item 8)', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-sync-moved-'));
    writeFileSync(join(dir, 'charter.txt'), 'The harbour charter names the pilots who may bring ships past the breakwater.\n');
    writeFileSync(join(dir, 'tides.txt'), 'The tide tables of the outer harbour are printed each spring.\n');
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    const args = ['upload', dir, '--sync', '--project', 'harbour', '--create-project', '--wait'];
    const first = await runCli(args, { env, timeoutMs: 240_000 });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain('second copy');
    expect((await runCli(['projects', 'create', 'Archive'], { env })).code).toBe(0);
    const moved = await runCli(['documents', 'move', 'charter.txt', '--to', 'Archive'], { env });
    expect(moved.code, moved.stderr).toBe(0);

    const again = await runCli(args, { env, timeoutMs: 240_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('warning: charter.txt is already in project Archive (as charter.txt): uploading it here makes a second copy\n');
    expect(again.stderr).not.toContain('tides.txt is already');
    // Nothing once this project holds it again.
    const dry = await runCli([...args, '--dry-run'], { env });
    expect(dry.stderr).not.toContain('second copy');
    // The API's filter behind it: the same bytes, wherever the caller may read them, and only there.
    const sha = (await api(d, `/api/v1/documents?project_id=${JSON.parse((await runCli(['projects', 'list', '--json'], { env })).stdout).projects.find((p: { name: string }) => p.name === 'Archive').id}`, { token: user.apiKey })).body.documents[0].sha256 as string;
    const both = await api(d, `/api/v1/documents?sha256=${sha}`, { token: user.apiKey });
    expect(both.body.documents).toHaveLength(2);
    const stranger = await addUser(d);
    expect((await api(d, `/api/v1/documents?sha256=${sha}`, { token: stranger.apiKey })).body.documents).toEqual([]);
    const bad = await api(d, '/api/v1/documents?sha256=XYZ', { token: user.apiKey });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('must be one to 100 lowercase hex SHA-256 digests, comma-separated');
  });
});
