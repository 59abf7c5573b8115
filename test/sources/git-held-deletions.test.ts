/**
 * Held deletions of a Git source, which lists only what changed between two commits (docs/sources.md, "The deletion
 * guard"): a pass that holds them keeps the commit it started from, so the pass confirmed after it, with nothing
 * new committed, finds the same deletions and removes them. Moved on to the new commit, that pass would list no
 * change, and the deleted files' documents would stay for good.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apacheUnavailable } from '../helpers/apache.js';
import { apacheSources } from '../helpers/apache-sources.js';
import { gitWorkTree } from '../helpers/git-work.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const SKIP = apacheUnavailable();

describe.skipIf(SKIP !== null)(`a Git source's held deletions${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-git-held');
  const world = apacheSources(['--sources-delete-guard-count', '2', '--sources-delete-guard-percent', '25']);
  afterAll(() => dirs.removeAll());

  it('removes them once confirmed, with nothing new committed', async () => {
    const { apache, client } = world;
    const work = dirs.make('work');
    const { commit } = gitWorkTree(apache.gitDir, 'held', work);
    mkdirSync(join(work, 'notes'));
    for (let i = 0; i < 5; i++) writeFileSync(join(work, 'notes', `n${i}.txt`), `Note ${i} of the held set, on subject ${i * 17}.`);
    commit('five notes');
    const project = await client.project('git held');
    const body = { url: `${apache.gitUrl}/private/held.git`, every: '1h', options: { branch: 'main', username: apache.davUser.name, password: apache.davUser.password } };
    const source = (await client.add(project, body)).id;
    await client.passAfter(project, source, 0);
    await client.settled(project, source, 5);
    for (const i of [0, 1, 2]) rmSync(join(work, 'notes', `n${i}.txt`));
    commit('three notes gone');
    const held = await client.sync(project, source);
    expect(held.status).toBe('paused');
    expect(held.paused_reason).toMatch(/would remove 3 of the source's 5 documents/);
    expect((await client.documents(project, source)).size).toBe(5);
    // Confirmed, with nothing new committed: the pass finds them gone still, as the held pass did.
    const again = await client.sync(project, source, { confirm: true });
    expect(again.status).toBe('active');
    expect(again.last_result).toMatchObject({ deleted: 3 });
    expect([...(await client.documents(project, source)).keys()].sort()).toEqual(['notes/n3.txt', 'notes/n4.txt']);
  }, 180_000);
});
