/**
 * How a `git` source fetches (docs/sources.md "Kinds"), against git http-backend on Apache: a shallow clone per
 * source under `<data-dir>/sources/`; a pass of the commit the last one saw lists nothing; a redirect is not
 * followed (the pass fails, the repository it points at is never read); only the http(s) and git transports.
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
