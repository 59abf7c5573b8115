import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { api, BIN, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { cliSuite } from './cli-env.js';

const SECRET = 'OUTSIDE-SECRET-ed25519-private-key-material';

/**
 * The security probe's finding 2: `upload DIR --sync` followed a file link out of the folder
 * (`src/setup.md -> ../../.ssh/id_ed25519`) and the key became searchable. A link met inside a folder is followed
 * only when it resolves to a file inside that folder; links out of it and links to folders upload nothing and are
 * named, one line each, in --json too, and under --watch when a link appears.
 */
describe('upload of a folder keeps to the folder: symbolic links out of it are not followed', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;
  cliSuite((s) => ({ d, user, env } = s));
  const watchers: ChildProcess[] = [];
  afterAll(() => {
    for (const w of watchers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  });

  /** A folder `docs/` with one note, beside `outside/secret.md` and a `keys/` folder it must never reach. */
  function layout(tag: string) {
    const top = mkdtempSync(join(tmpdir(), `docsearch-links-${tag}-`));
    const docs = join(top, 'docs');
    mkdirSync(join(docs, 'sub'), { recursive: true });
    mkdirSync(join(top, 'outside'));
    writeFileSync(join(top, 'outside/secret.md'), `${SECRET}\n`);
    writeFileSync(join(top, 'outside/other.md'), `${SECRET} again\n`);
    writeFileSync(join(docs, 'guide.md'), `# Guide\n\nHow the ${tag} team files its travel expenses, step by step.\n`);
    return { top, docs };
  }

  const filenames = async (project: string) => {
    const projects = await api(d, '/api/v1/projects', { token: user.apiKey });
    const id = projects.body.projects.find((p: { name: string }) => p.name === project)!.id as string;
    const res = await api(d, `/api/v1/documents?project_id=${id}&limit=100`, { token: user.apiKey });
    return res.body.documents.map((x: { path: string }) => x.path).sort();
  };

  it('upload --sync sends files and links inside the folder, and names each link out of it (human and --json)', async () => {
    const { top, docs } = layout('sync');
    symlinkSync('../../outside/secret.md', join(docs, 'sub/setup.md')); // `..` out of the folder
    symlinkSync(join(top, 'outside/other.md'), join(docs, 'absolute.md')); // an absolute path out
    symlinkSync('sub/../../outside/secret.md', join(docs, 'twisty.md')); // back in, then out
    symlinkSync('../outside', join(docs, 'elsewhere')); // a folder out
    mkdirSync(join(docs, '.versions'));
    writeFileSync(join(docs, '.versions/v3.md'), '# Version 3\n\nThe third version of the expense policy, with the new mileage rate.\n');
    symlinkSync('.versions/v3.md', join(docs, 'latest.md')); // a file inside (in a folder left out): uploaded as latest.md
    symlinkSync('..', join(docs, 'sub/up')); // a folder inside (the folder itself): never followed

    const json = await runCli(['upload', docs, '--sync', '--project', 'links', '--create-project', '--json', '--wait'], { env, timeoutMs: 240_000 });
    expect(json.code, json.stderr).toBe(0);
    const out = JSON.parse(json.stdout);
    expect(out.sync.added.sort()).toEqual(['guide.md', 'latest.md']);
    const outside = (name: string, target: string, dir = '') => `${join(docs, name)}${dir}: a symbolic link to ${target}, outside ${docs} (not followed, nothing uploaded from it)`;
    expect(out.skipped).toEqual(
      expect.arrayContaining([
        outside('sub/setup.md', '../../outside/secret.md'),
        outside('absolute.md', join(top, 'outside/other.md')),
        outside('twisty.md', 'sub/../../outside/secret.md'),
        outside('elsewhere', '../outside', '/'),
        `${join(docs, 'sub/up')}/: a symbolic link to a folder (folder links are not followed)`,
      ]),
    );
    expect(await filenames('links')).toEqual(['guide.md', 'latest.md']);
    const search = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: SECRET, mode: 'keyword' } });
    expect(search.status).toBe(200);
    expect(JSON.stringify(search.body.results)).not.toContain(SECRET);

    // The human form says it per link too, on stderr.
    const human = await runCli(['upload', docs, '--sync', '--project', 'links'], { env, timeoutMs: 120_000 });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toContain(`skipped ${outside('sub/setup.md', '../../outside/secret.md')}`);
    expect(human.stderr).toContain(`skipped ${outside('elsewhere', '../outside', '/')}`);
  }, 300_000);

  it('upload --sync --watch refuses a link out of the folder made while it watches, and says so', async () => {
    const { docs } = layout('watch');
    const proc = spawn(process.execPath, [BIN, 'upload', docs, '--sync', '--watch', '--json', '--project', 'watched', '--create-project'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    watchers.push(proc);
    let out = '';
    proc.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    const events = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
    await vi.waitFor(() => expect(events().some((e) => e.event === 'watching')).toBe(true), { timeout: 60_000, interval: 100 });

    symlinkSync('../outside/secret.md', join(docs, 'planted.md'));
    writeFileSync(join(docs, 'fresh.md'), '# Fresh\n\nA note written while the folder is watched, about the office plants.\n');
    await vi.waitFor(() => expect(events().some((e) => e.event === 'added' && e.path === 'fresh.md')).toBe(true), { timeout: 30_000, interval: 100 });
    expect(events().filter((e) => e.event === 'skipped')).toEqual([
      expect.objectContaining({ paths: [`${join(docs, 'planted.md')}: a symbolic link to ../outside/secret.md, outside ${docs} (not followed, nothing uploaded from it)`] }),
    ]);
    expect(events().some((e) => e.path === 'planted.md')).toBe(false);
    proc.kill('SIGTERM');
    expect(await new Promise((res) => proc.once('exit', res))).toBe(0);
    expect(await filenames('watched')).toEqual(['fresh.md', 'guide.md']);
  }, 180_000);
});
