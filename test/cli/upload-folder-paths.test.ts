import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { cliSuite } from './cli-env.js';

interface Doc {
  id: string;
  path: string | null;
  sha256: string;
  status: string;
  filename: string;
}

const MINUTE = 60_000;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
/** One distinct text per topic, each with a word of its own that keyword search finds. */
const text = (topic: string, version = 1) => `A note about ${topic}, version ${version}. It holds enough words about ${topic} to be a chunk of its own.\n`;

/** Writes `files` (path below `root` → text) and returns `root`. */
function folder(root: string, files: Record<string, string>): string {
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), body);
  }
  return root;
}

describe('upload of a folder keeps its paths, the folder name first, as the web does', () => {
  let env: Record<string, string>;
  cliSuite((s) => ({ env } = s), { setupTimeoutMs: MINUTE });
  const work = () => mkdtempSync(join(tmpdir(), 'docsearch-folder-paths-'));
  const cli = (args: string[]) => runCli(args, { env, timeoutMs: 4 * MINUTE });
  const json = async (args: string[]) => {
    const res = await cli([...args, '--json']);
    return { ...res, body: JSON.parse(res.stdout || 'null') };
  };
  /** The project's documents (replaced ones are not listed), by path. */
  const docs = async (project: string, extra: string[] = []): Promise<Doc[]> => {
    const res = await json(['documents', 'list', '--project', project, ...extra]);
    expect(res.code, res.stderr).toBe(0);
    return res.body.documents;
  };
  const paths = (ds: Doc[]) => ds.map((d) => d.path).sort();
  /** Every text is held by a ready document of the project: no content left it. */
  const holds = async (project: string, texts: string[]) => {
    const ready = new Set((await docs(project)).filter((d) => d.status === 'ready').map((d) => d.sha256));
    for (const t of texts) expect(ready.has(sha(t)), `project ${project} holds "${t.trim()}"`).toBe(true);
  };

  it('files found in a folder keep `FOLDER/…`, named ones none; --path finds them; new bytes at a path replace the old version; --dry-run and --json say each path', { timeout: 6 * MINUTE }, async () => {
    const w = work();
    const dir = folder(join(w, 'contracts'), { 'lease.txt': text('walrus lease'), 'sub/nda.txt': text('pelican secrecy') });
    const extra = folder(w, { 'extra.txt': text('marmot appendix') });
    const args = [`${dir}/`, join(extra, 'extra.txt'), '--recursive', '--project', 'basic'];

    const dry = await json(['upload', ...args, '--create-project', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.body.paths).toEqual({ [join(dir, 'lease.txt')]: 'contracts/lease.txt', [join(dir, 'sub/nda.txt')]: 'contracts/sub/nda.txt', [join(w, 'extra.txt')]: null });
    const table = await cli(['upload', ...args, '--create-project', '--dry-run']);
    expect(table.stdout).toMatch(new RegExp(`^upload\\s+${join(dir, 'sub/nda.txt')}\\s+contracts/sub/nda.txt$`, 'm'));

    const up = await json(['upload', ...args, '--create-project', '--wait']);
    expect(up.code, up.stderr).toBe(0);
    expect(Object.fromEntries(up.body.documents.map((d: Doc & { file: string }) => [d.file, d.path]))).toEqual({
      [join(dir, 'lease.txt')]: 'contracts/lease.txt',
      [join(dir, 'sub/nda.txt')]: 'contracts/sub/nda.txt',
      [join(w, 'extra.txt')]: null,
    });

    const found = await json(['search', 'pelican secrecy', '--project', 'basic', '--path', 'contracts/', '--mode', 'keyword']);
    expect(found.code, found.stderr).toBe(0);
    expect(found.body.results.map((r: { document: { path: string } }) => r.document.path)).toContain('contracts/sub/nda.txt');
    expect(paths(await docs('basic', ['--path', 'contracts/']))).toEqual(['contracts/lease.txt', 'contracts/sub/nda.txt']);

    // The folder again after an edit: one document at the path, the new version.
    const [old] = await docs('basic', ['--path', 'contracts/lease.txt']);
    writeFileSync(join(dir, 'lease.txt'), text('walrus lease', 2));
    const again = await json(['upload', dir, '--recursive', '--project', 'basic', '--wait']);
    expect(again.code, again.stderr).toBe(0);
    await expect.poll(async () => (await docs('basic', ['--path', 'contracts/lease.txt'])).map((d) => d.sha256), { timeout: MINUTE }).toEqual([sha(text('walrus lease', 2))]);
    expect((await docs('basic', ['--path', 'contracts/lease.txt']))[0]!.id).not.toBe(old!.id);
    expect(await docs('basic')).toHaveLength(3);
  });

  it('two folders that would keep files at the same path are refused before anything is sent', async () => {
    const w = work();
    folder(w, { 'a/docs/readme.txt': text('heron one'), 'b/docs/readme.txt': text('heron two') });
    const res = await cli(['upload', join(w, 'a/docs'), join(w, 'b/docs'), '--project', 'collide', '--create-project']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`${join(w, 'a/docs/readme.txt')} and ${join(w, 'b/docs/readme.txt')} would both be kept at docs/readme.txt`);
    expect(res.stderr).toContain('--prefix');
    expect((await cli(['projects', 'show', 'collide'])).code).not.toBe(0);
  });

  it('a path the server refuses fails that file alone, with the server\'s words', { timeout: 3 * MINUTE }, async () => {
    const dir = folder(join(work(), 'odd'), { 'good.txt': text('otter good'), 'bad\\name.txt': text('otter bad') });
    const res = await json(['upload', dir, '--project', 'odd', '--create-project']);
    expect(res.code).toBe(1);
    expect(res.body.documents.map((d: Doc) => d.path)).toEqual(['odd/good.txt']);
    expect(res.body.failed).toHaveLength(1);
    expect(res.body.failed[0].path).toBe(join(dir, 'bad\\name.txt'));
    expect(res.body.failed[0].error).toMatch(/^paths\[0\]: .*backslash/);
  });

  it('a folder uploaded plainly, then synced: kept where it is, the sync says --prefix NAME; --prune stops at the guard; --force moves it and nothing is lost', { timeout: 8 * MINUTE }, async () => {
    const texts = { 'a.txt': text('lynx alpha'), 'b.txt': text('lynx beta'), 'c.txt': text('lynx gamma') };
    const dir = folder(join(work(), 'plainfirst'), texts);
    const p = ['--project', 'plainfirst'];
    expect((await cli(['upload', dir, ...p, '--create-project', '--wait'])).code).toBe(0);
    const before = await docs('plainfirst');
    expect(paths(before)).toEqual(['plainfirst/a.txt', 'plainfirst/b.txt', 'plainfirst/c.txt']);

    const sync = await cli(['upload', dir, '--sync', ...p]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toContain('sync: 0 new, 0 changed, 3 unchanged, 0 to delete');
    expect(sync.stderr).toContain('add --prefix plainfirst to sync them where they are');
    expect(await docs('plainfirst')).toEqual(before);

    const prune = await cli(['upload', dir, '--sync', '--prune', ...p]);
    expect(prune.code).toBe(2);
    expect(prune.stderr).toContain('add --prefix plainfirst');
    expect(await docs('plainfirst')).toEqual(before);

    const prefixed = await cli(['upload', dir, '--sync', '--prune', '--prefix', 'plainfirst', ...p]);
    expect(prefixed.code, prefixed.stderr).toBe(0);
    expect(prefixed.stderr).toContain('sync: 0 new, 0 changed, 3 unchanged, 0 to delete');
    expect(prefixed.stderr).not.toContain('--prefix plainfirst to sync');

    // --force takes the sync's own paths: each document moves (deleted, its bytes sent again at the new path).
    const forced = await json(['upload', dir, '--sync', '--prune', '--force', '--wait', ...p]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.body.sync.removed.map((r: { reason: string }) => r.reason)).toEqual(['moved', 'moved', 'moved']);
    expect(paths(await docs('plainfirst'))).toEqual(['a.txt', 'b.txt', 'c.txt']);
    await holds('plainfirst', Object.values(texts));

    // A plain upload now adds nothing (the bytes are held at the sync's paths), and the next sync sends nothing.
    const plainAgain = await cli(['upload', dir, ...p]);
    expect(plainAgain.code, plainAgain.stderr).toBe(0);
    expect(plainAgain.stderr).toContain(`${join(dir, 'a.txt')}: the project already holds these bytes at a.txt`);
    const quiet = await cli(['upload', dir, '--sync', '--prune', ...p]);
    expect(quiet.stderr).toContain('sync: 0 new, 0 changed, 3 unchanged, 0 to delete');
    expect(paths(await docs('plainfirst'))).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });

  for (const prune of [false, true]) {
    it(`synced, then a changed file uploaded plainly, then synced${prune ? ' with --prune' : ''}: every file's content stays, and the next pass sends nothing`, { timeout: 8 * MINUTE }, async () => {
      const project = `syncfirst-${prune ? 'prune' : 'keep'}`;
      const p = ['--project', project];
      const flags = prune ? ['--sync', '--prune'] : ['--sync'];
      // b.txt holds a.txt's bytes: the project keeps them once, as a.txt's document.
      const dir = folder(join(work(), 'pair'), { 'a.txt': text(`ibis ${project}`), 'b.txt': text(`ibis ${project}`), 'c.txt': text(`crane ${project}`) });
      expect((await cli(['upload', dir, '--sync', ...p, '--create-project', '--wait'])).code).toBe(0);

      // A plain upload of the unchanged folder changes nothing, and says where the bytes are.
      const plain = await cli(['upload', dir, ...p]);
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stderr).toContain(`${join(dir, 'c.txt')}: the project already holds these bytes at c.txt`);
      expect(paths(await docs(project))).toEqual(['a.txt', 'c.txt']);

      writeFileSync(join(dir, 'a.txt'), text(`ibis ${project}`, 2));
      expect((await cli(['upload', dir, ...p, '--wait'])).code).toBe(0);
      expect(paths(await docs(project))).toEqual(['a.txt', 'c.txt', 'pair/a.txt']);

      const synced = await json(['upload', dir, ...flags, ...p, '--wait']);
      expect(synced.code, synced.stderr).toBe(0);
      const current = [text(`ibis ${project}`, 2), text(`ibis ${project}`), text(`crane ${project}`)];
      await holds(project, current);
      // b.txt's bytes were held by a.txt's old version, which this pass takes away: they moved to b.txt.
      expect(synced.body.sync.added).toContain('b.txt');
      if (prune) expect(paths(await docs(project))).toEqual(['a.txt', 'b.txt', 'c.txt']);
      else expect(paths(await docs(project))).toEqual(['b.txt', 'c.txt', 'pair/a.txt']);

      const next = await json(['upload', dir, ...flags, ...p, '--wait']);
      expect(next.code, next.stderr).toBe(0);
      expect(next.body.sync.counts).toMatchObject({ new: 0, changed: 0, unchanged: 3, deleted: 0 });
      await holds(project, current);

      if (!prune) {
        // Then with --prune: pair/a.txt moves to a.txt; again nothing is lost, and the pass after sends nothing.
        const pruned = await json(['upload', dir, '--sync', '--prune', ...p, '--wait']);
        expect(pruned.code, pruned.stderr).toBe(0);
        expect(paths(await docs(project))).toEqual(['a.txt', 'b.txt', 'c.txt']);
        await holds(project, current);
        const last = await json(['upload', dir, '--sync', '--prune', ...p]);
        expect(last.body.sync.counts).toMatchObject({ new: 0, changed: 0, unchanged: 3, deleted: 0 });
      }
    });
  }
});
