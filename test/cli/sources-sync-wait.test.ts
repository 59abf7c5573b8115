/**
 * `docsearch sources sync --wait` (and `sources add --wait`, its first pass), through the real CLI against a daemon with folder sources: it returns once the pass
 * asked for has ended — not one that was running when it asked, which may have listed the folder before the newest
 * file — says what the pass did, gives the source as `sources show --json` does, and exits 1 when the pass could not
 * take an item or the source runs no pass (paused by its owner).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { cliEnv } from './cli-env.js';

const MINUTE = 60_000;

interface SourceJson {
  id: string;
  status: string;
  last_result: { listed: number; added: number; failed: number } | null;
  item_errors?: { count: number; items: { path: string }[] };
}

describe('docsearch sources sync --wait and sources add --wait', () => {
  const dirs = tempDirs('docsearch-sync-wait');
  let root: string;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;
  let env: ReturnType<typeof cliEnv>;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ args: ['--source-roots', root, '--sources-min-interval', '1'] });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
    env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  function folder(name: string, files: Record<string, string>): string {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true });
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
    return dir;
  }

  const documentNames = async (project: string) => (await client.allDocuments(project)).map((x) => x.filename);

  /** A folder source of a new project, hourly, with its first pass over. */
  async function synced(name: string, files: Record<string, string>) {
    const dir = folder(name, files);
    const project = await client.project(`sync wait ${name}`);
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    await client.passAfter(project, source.id, 0);
    return { dir, project, source };
  }

  it('returns after the pass it asked for, with the file written just before it, even while another pass runs', async () => {
    // Enough files that the first pass is still running when the sync is asked for.
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`note-${String(i).padStart(3, '0')}.txt`, `Note ${i}: about the lapwing number ${i * 7}.`]));
    const dir = folder('many', many);
    const project = await client.project('sync wait');
    const source = await client.add(project, { url: `file://${dir}`, every: '1h' });
    // The source's first pass starts at once; a file written now may come after its listing.
    writeFileSync(join(dir, 'aaa-newest.txt'), 'The newest note, about a curlew.');
    const r = await runCli(['sources', 'sync', source.id, '--wait', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as SourceJson;
    expect(s.id).toBe(source.id);
    expect(s.status).not.toBe('syncing');
    expect(s.last_result?.listed).toBe(301);
    expect(s.last_result?.failed).toBe(0);
    // Done means done: the newest file is a document as the command returns.
    expect(await documentNames(project)).toContain('aaa-newest.txt');

    // Plain output says what the pass did.
    writeFileSync(join(dir, 'zzz-later.txt'), 'A later note, about a dunlin.');
    const plain = await runCli(['sources', 'sync', source.id, '--wait'], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toMatch(/pass of file:\/\/.*many finished: 302 listed, 1 added, 0 changed, 0 deleted, 301 unchanged, 0 failed/);
    expect(await documentNames(project)).toContain('zzz-later.txt');
  }, 3 * MINUTE);

  it('exits 1 naming an item the pass could not take, after saying what it did', async () => {
    const { dir, source } = await synced('unreadable', { 'fine.txt': 'A readable note about wrens.' });
    writeFileSync(join(dir, 'program.bin'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 0, 0, 0, 0]));
    const r = await runCli(['sources', 'sync', source.id, '--wait'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/finished: 2 listed, 0 added, 0 changed, 0 deleted, 1 unchanged, 1 failed/);
    expect(r.stderr).toMatch(/item program\.bin: "program\.bin" is not a type docsearch reads/);
    expect(r.stderr).toMatch(/1 item\(s\) of file:\/\/.*unreadable failed in the pass/);
    // --json: the source on stdout, the failure on stderr, the same exit code.
    const json = await runCli(['sources', 'sync', source.id, '--wait', '--json'], { env });
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as SourceJson).item_errors?.items.map((i) => i.path)).toEqual(['program.bin']);
  }, 2 * MINUTE);

  it('ends when a quota pauses the pass, saying why, and exits 1; a source paused before is refused at once', async () => {
    const { dir, project, source } = await synced('capped', { 'small.txt': 'A small note about a godwit.' });
    // The first user of the daemon is its admin: the project gets a quota the next files pass.
    const capped = await api(d, `/api/v1/admin/projects/${project}`, { token: user.apiKey, method: 'PATCH', body: { quota_bytes: 16 * 1024 } });
    expect(capped.status, JSON.stringify(capped.body)).toBe(200);
    for (const name of ['a', 'b']) writeFileSync(join(dir, `${name}.txt`), `Capped memo ${name} about the harbour works. `.repeat(300));
    const started = Date.now();
    const r = await runCli(['sources', 'sync', source.id, '--wait', '--timeout', '120'], { env });
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(r.stderr).toMatch(/is paused \(over the quota of the project sync wait capped .*\): no pass runs until it is resumed/);
    // Paused already: the server refuses the sync, and the command says so without waiting.
    const again = await runCli(['sources', 'sync', source.id, '--wait'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/the source is paused: over the quota/);
  }, 2 * MINUTE);
  it('add --wait prints the id, then what the first pass did; the documents are there when it returns', async () => {
    const dir = folder('added', { 'one.txt': 'A note about a knot.', 'two.md': '# Two\n\nA note about a sanderling.' });
    await client.project('add wait');
    const r = await runCli(['sources', 'add', 'add wait', `file://${dir}`, '--every', '1h', '--wait'], { env });
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim();
    expect(id).toMatch(/^src_/);
    expect(r.stderr).toMatch(/finished: 2 listed, 2 added, 0 changed, 0 deleted, 0 unchanged, 0 failed/);
    const json = await runCli(['sources', 'add', 'add wait', `file://${folder('added-json', { 'three.txt': 'A note about a turnstone.' })}`, '--wait', '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    const s = JSON.parse(json.stdout) as SourceJson & { project_id: string };
    expect(s.last_result).toMatchObject({ listed: 1, added: 1, failed: 0 });
    expect(await documentNames(s.project_id)).toEqual(expect.arrayContaining(['one.txt', 'two.md', 'three.txt']));
  }, 2 * MINUTE);
});
