/**
 * How a `git` source fetches (docs/sources.md "Kinds"), against git http-backend on Apache: a shallow clone per
 * source under `<data-dir>/sources/`; a pass of the commit the last one saw lists nothing; the branch HEAD names unless
 * the `branch` option names another, and again once new options (which replace the old) leave it out, in a pass at
 * once; a redirect is not followed (the pass fails, the repository it points at is never read); only the http(s) and
 * git transports.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { gitWorkTree } from '../helpers/git-work.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;
const SKIP = apacheUnavailable();

describe.skipIf(SKIP !== null)(`git sources fetch${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-git-fetch');
  let apache: Apache;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;
  let url: string;
  const options = () => ({ username: apache.davUser.name, password: apache.davUser.password });

  beforeAll(async () => {
    apache = await startApache();
    const work = dirs.make('work');
    const { commit } = gitWorkTree(apache.gitDir, 'fetched', work);
    writeFileSync(join(work, 'guide.md'), '# Guide\n\nA guide about avocets.');
    commit('a guide');
    url = `${apache.gitUrl}/private/fetched.git`;
    d = await startDaemon({ args: ['--sources-allow-private', '--sources-min-interval', '1'] });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
  }, 2 * MINUTE);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await apache?.stop();
    dirs.removeAll();
  });

  it('keeps a shallow clone under <data-dir>/sources/, and lists nothing for the commit it saw last', async () => {
    const project = await client.project('git clone');
    const source = await client.add(project, { url, options: options() });
    await client.passAfter(project, source.id, 0);
    expect([...(await client.settled(project, source.id, 1)).keys()]).toEqual(['guide.md']);
    const clones = readdirSync(join(d.dataDir, 'sources'), { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('repo.git'));
    expect(clones).toHaveLength(1);
    expect(execFileSync('git', ['rev-parse', '--is-shallow-repository'], { cwd: join(d.dataDir, 'sources', clones[0]!), encoding: 'utf8' }).trim()).toBe('true');
    const again = await client.sync(project, source.id);
    expect(again.last_result).toMatchObject({ listed: 0, added: 0, changed: 0, deleted: 0, unchanged: 0 });
  });

  it("reads the branch the repository's HEAD names unless the branch option names another; new options replace the old, in a pass at once", async () => {
    // HEAD names `trunk`, not `main`: a source falling back to `main` would read the wrong files.
    const work = dirs.make('heads');
    const { git, commit } = gitWorkTree(apache.gitDir, 'heads', work);
    writeFileSync(join(work, 'on-main.md'), '# Main\n\nThe main branch, about shovelers.');
    commit('main');
    git('checkout', '--quiet', '-b', 'trunk');
    git('rm', '--quiet', 'on-main.md');
    writeFileSync(join(work, 'on-trunk.md'), '# Trunk\n\nThe trunk branch, about garganeys.');
    git('add', '-A');
    git('commit', '--quiet', '-m', 'trunk');
    git('push', '--quiet', 'origin', 'trunk');
    execFileSync('git', ['symbolic-ref', 'HEAD', 'refs/heads/trunk'], { cwd: join(apache.gitDir, 'private', 'heads.git') });
    const headsUrl = `${apache.gitUrl}/private/heads.git`;
    const project = await client.project('git heads');
    const byHead = await client.add(project, { url: headsUrl, options: options() });
    await client.passAfter(project, byHead.id, 0);
    expect([...(await client.settled(project, byHead.id, 1)).keys()]).toEqual(['on-trunk.md']);
    // In a project of its own: bytes another source of the project has are that source's document.
    const named = await client.project('git branch named');
    const byName = await client.add(named, { url: headsUrl, options: { ...options(), branch: 'main' } });
    await client.passAfter(named, byName.id, 0);
    expect([...(await client.settled(named, byName.id, 1)).keys()]).toEqual(['on-main.md']);
    // New options replace them all: without `branch` it reads HEAD's again, in a pass that starts at once (its next
    // is an hour away), the password entered again with them.
    const entered = Date.now();
    const patched = await api(d, `/api/v1/projects/${named}/sources/${byName.id}`, { method: 'PATCH', token: user.apiKey, body: { options: options() } });
    expect(patched.body).toMatchObject({ options: { username: apache.davUser.name }, secrets: ['password'] });
    expect(patched.body.options).not.toHaveProperty('branch');
    expect((await client.passAfter(named, byName.id, entered, 20_000)).last_result).toMatchObject({ added: 1, deleted: 1 });
    expect([...(await client.settled(named, byName.id, 1)).keys()]).toEqual(['on-trunk.md']);
  });

  it('does not follow a redirect', async () => {
    const asked: string[] = [];
    const redirect: Server = createServer((req, res) => {
      asked.push(req.url!);
      res.writeHead(301, { location: `${url}${req.url!.replace(/^\/moved\.git/, '')}` }).end();
    });
    await new Promise<void>((r) => redirect.listen(0, '127.0.0.1', r));
    try {
      const project = await client.project('git redirect');
      const source = await client.add(project, { url: `http://127.0.0.1:${(redirect.address() as AddressInfo).port}/moved.git`, options: options() });
      const failed = await client.passAfter(project, source.id, 0);
      expect(failed.status).toBe('error');
      expect(failed.error).toMatch(/^the repository could not be fetched: /);
      expect(asked).toHaveLength(1);
      expect(await client.allDocuments(project)).toEqual([]);
    } finally {
      redirect.close();
    }
  });

  it('takes only the http(s) and git transports', async () => {
    const project = await client.project('git transports');
    for (const other of ['ssh://127.0.0.1/team/docs.git', 'ftp://127.0.0.1/team/docs.git', `file://${apache.gitDir}/private/fetched.git`]) {
      const refused = await api(d, `/api/v1/projects/${project}/sources`, { token: user.apiKey, body: { kind: 'git', url: other } });
      expect(refused.status, other).toBe(400);
      expect(refused.body.error.message, other).toContain('a Git source is an https://, http:// or git:// URL of a repository');
    }
  });
});
