/**
 * The trash through the built daemon (#53 item 7): a deleted document is out of search, lists and counts at once and
 * back, under the same id, at once after a restore; a bulk delete of 50 on the web is restored whole; `upload --sync --prune`
 * deletions land in the trash; the CLI lists, restores and purges; the web's Trash page restores.
 * Retention and its purge on a moved clock: test/store/trash.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { cliEnv } from '../cli/cli-env.js';
import { loggedIn } from '../web/library-client.js';

describe('the trash', () => {
  let d: Daemon;
  let user: TestUser;
  let env: Record<string, string>;

  daemonForSuite(
    async (started) => {
      d = started;
      user = await addUser(d);
      env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    },
    { timeoutMs: 60_000 },
  );

  /** The ids of the documents a keyword search finds. */
  async function found(word: string): Promise<string[]> {
    const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: word, mode: 'keyword', limit: 100 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return [...new Set((res.body.results as { document: { id: string } }[]).map((r) => r.document.id))];
  }

  async function upload(files: { name: string; text: string }[]): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < files.length; i += 20) {
      const res = await uploadFiles(d, user.apiKey, files.slice(i, i + 20).map((f) => ({ name: f.name, bytes: Buffer.from(f.text) })), { query: '?wait=true' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(...(res.body.documents as { id: string }[]).map((x) => x.id));
    }
    return ids;
  }

  /** Whether the documents list has `id`, and its project's document count. */
  async function listedAndCounted(id: string, projectId: string): Promise<{ listed: boolean; count: number }> {
    const list = await api(d, `/api/v1/documents?project_id=${projectId}&limit=100`, { token: user.apiKey });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const project = await api(d, `/api/v1/projects/${projectId}`, { token: user.apiKey });
    return { listed: (list.body.documents as { id: string }[]).some((x) => x.id === id), count: project.body.document_count as number };
  }

  it('delete → not found by search, lists or counts → restore → found again, the same id', async () => {
    const [id] = await upload([{ name: 'quokka.txt', text: 'The quokkafern grows on the north slope.' }]);
    const projectId = (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body.project_id as string;
    const before = await listedAndCounted(id!, projectId);
    expect(before.listed).toBe(true);
    expect(await found('quokkafern')).toEqual([id]);
    expect((await api(d, `/api/v1/documents/${id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    expect(await found('quokkafern')).toEqual([]);
    expect((await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).status).toBe(404);
    expect(await listedAndCounted(id!, projectId)).toEqual({ listed: false, count: before.count - 1 });
    const trash = await api(d, '/api/v1/trash', { token: user.apiKey });
    expect(trash.body.documents).toEqual([expect.objectContaining({ id, filename: 'quokka.txt', trashed_by: user.email, chunk_count: 1 })]);
    expect(Date.parse(trash.body.documents[0].purge_at) - Date.parse(trash.body.documents[0].trashed_at)).toBe(30 * 24 * 3600_000);
    const restored = await api(d, `/api/v1/trash/${id}/restore`, { method: 'POST', token: user.apiKey });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body.id).toBe(id);
    expect(await found('quokkafern')).toEqual([id]);
    expect(await listedAndCounted(id!, projectId)).toEqual(before);
    expect((await api(d, '/api/v1/trash', { token: user.apiKey })).body.documents).toEqual([]);
    expect((await api(d, `/api/v1/trash/${id}/restore`, { method: 'POST', token: user.apiKey })).status).toBe(404);
  });

  it('restores a bulk delete of 50 from the web whole, with the CLI', { timeout: 300_000 }, async () => {
    const ids = await upload(Array.from({ length: 50 }, (_, i) => ({ name: `bulk-${i}.txt`, text: `Bulk note ${i} about the wombatrix inventory.` })));
    expect((await found('wombatrix')).sort()).toEqual([...ids].sort());
    const web = await loggedIn(d, user);
    await web.get('/documents');
    const res = await web.post('/documents/delete', { _csrf: web.csrf, ids, return_to: '/documents' });
    expect(res.status).toBe(303);
    expect(await found('wombatrix')).toEqual([]);
    const listed = await runCli(['trash', 'list', '--json', 'id'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout).documents as { id: string }[]).map((x) => x.id).sort()).toEqual([...ids].sort());
    const restored = await runCli(['trash', 'restore', ...ids], { env, timeoutMs: 120_000 });
    expect(restored.code, restored.stderr).toBe(0);
    expect((await found('wombatrix')).sort()).toEqual([...ids].sort());
  });

  it('puts what `upload --sync --prune` deletes in the trash, and the CLI purges it for good', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-trash-sync-'));
    try {
      mkdirSync(join(dir, 'notes'));
      for (let i = 0; i < 4; i++) writeFileSync(join(dir, 'notes', `n${i}.txt`), `Synced note ${i} on the platypod harbour.`);
      const first = await runCli(['upload', dir, '--sync', '--project', 'synced', '--create-project', '--wait'], { env, timeoutMs: 200_000 });
      expect(first.code, first.stderr).toBe(0);
      rmSync(join(dir, 'notes', 'n0.txt'));
      rmSync(join(dir, 'notes', 'n1.txt'));
      const pruned = await runCli(['upload', dir, '--sync', '--prune', '--project', 'synced', '--wait', '--max-delete', '2'], { env, timeoutMs: 200_000 });
      expect(pruned.code, pruned.stderr).toBe(0);
      // The two kept notes, and only they, are listed and found; the two pruned are in the trash.
      const synced = ((await api(d, '/api/v1/projects', { token: user.apiKey })).body.projects as { id: string; name: string }[]).find((p) => p.name === 'synced')!;
      const listed = (await api(d, `/api/v1/documents?project_id=${synced.id}&limit=100`, { token: user.apiKey })).body.documents as { id: string; path: string }[];
      expect(listed.map((x) => x.path).sort()).toEqual(['notes/n2.txt', 'notes/n3.txt']);
      expect((await found('platypod')).sort()).toEqual(listed.map((x) => x.id).sort());
      const trash = JSON.parse((await runCli(['trash', 'list', '--project', 'synced', '--json'], { env })).stdout).documents as { id: string; path: string }[];
      expect(trash.map((x) => x.path).sort()).toEqual(['notes/n0.txt', 'notes/n1.txt']);
      const purge = await runCli(['trash', 'purge', 'notes/n0.txt', trash.find((x) => x.path === 'notes/n1.txt')!.id, '--yes'], { env });
      expect(purge.code, purge.stderr).toBe(0);
      expect(purge.stderr).toContain('for good');
      expect((await api(d, '/api/v1/trash', { token: user.apiKey })).body.documents).toEqual([]);
      expect((await api(d, `/api/v1/trash/${trash[0]!.id}/restore`, { method: 'POST', token: user.apiKey })).status).toBe(404);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps a trashed document's chunks out of the candidate lists: trashing 300 near-duplicate documents leaves the next page full", { timeout: 600_000 }, async () => {
    // 300 documents nearer the question than any kept note, more than the vector list's depth (200): before the fix
    // they took every place in it and were dropped only after, leaving the page empty.
    const question = 'How do lighthouse keepers ration lamp oil through the winter?';
    const decoyIds = await upload(Array.from({ length: 300 }, (_, i) => ({ name: `lamp-oil-${i}.md`, text: `## ${question} (${i})\n\nLighthouse keepers ration lamp oil through the winter.` })));
    const kept = await upload(
      Array.from({ length: 12 }, (_, i) => ({ name: `keeper-${i}.txt`, text: `Station ${i} log: the keepers counted the oil for the lamp through the cold months.` })),
    );
    const doc = await api(d, `/api/v1/documents/${decoyIds[0]}`, { token: user.apiKey });
    // A second project with a row of its own: a search of the first then filters inside LanceDB (the `soleScope` fast
    // path is taken by the search of every project).
    const other = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'lamp-other' } });
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    expect((await uploadFiles(d, user.apiKey, [{ name: 'other.txt', bytes: Buffer.from('A harbour tide table.') }], { projectId: other.body.id, query: '?wait=true' })).status).toBe(200);
    const search = async (mode: string, projectIds?: string[]) => {
      const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: question, mode, limit: 10, ...(projectIds ? { project_ids: projectIds } : {}) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.results as { document: { id: string } }[]).map((r) => r.document.id);
    };
    // Before: the decoys fill the first page in every mode.
    for (const mode of ['vector', 'hybrid', 'keyword']) {
      const before = await search(mode);
      expect(before, mode).toHaveLength(10);
      expect(before.every((id) => decoyIds.includes(id)), mode).toBe(true);
    }
    for (const id of decoyIds) expect((await api(d, `/api/v1/documents/${id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
    for (const projectIds of [undefined, [doc.body.project_id as string]]) {
      for (const mode of ['vector', 'hybrid', 'keyword']) {
        const ids = await search(mode, projectIds);
        expect(ids, `${mode} ${projectIds ? 'one project' : 'every project'}`).toHaveLength(10);
        expect(ids.every((id) => kept.includes(id)), mode).toBe(true);
      }
    }
    const cli = await runCli(['search', '--json', '--mode', 'vector', '--limit', '10', question], { env });
    expect(cli.code, cli.stderr).toBe(0);
    const shown = (JSON.parse(cli.stdout).results as { document: { id: string } }[]).map((r) => r.document.id);
    expect(shown).toHaveLength(10);
    expect(shown.every((id) => kept.includes(id)), cli.stdout).toBe(true);
    for (const id of decoyIds) expect((await api(d, `/api/v1/trash/${id}`, { method: 'DELETE', token: user.apiKey })).status).toBe(204);
  });

  it('the Trash page lists a deleted document and restores it, and the delete page says where it goes', async () => {
    const [id] = await upload([{ name: 'echidna.txt', text: 'The echidnaquill ledger.' }]);
    const web = await loggedIn(d, user);
    const confirm = await web.get(`/documents/${id}/delete`);
    expect(confirm.text).toContain('can be restored as it was for 30 days');
    expect(confirm.text).not.toContain("can't be undone");
    await web.post(`/documents/${id}/delete`, { _csrf: web.csrf });
    const page = await web.get('/trash');
    expect(page.status).toBe(200);
    // Listed as an entry with its Restore form, not only named by the delete's notice this page also shows.
    expect(page.text).toContain(`action="/trash/${id}/restore"`);
    const restored = await web.post(`/trash/${id}/restore`, { _csrf: web.csrf });
    expect(restored.status).toBe(303);
    expect(restored.location).toBe(`/documents/${id}`);
    expect(await found('echidnaquill')).toEqual([id]);
    expect((await web.get('/trash')).text).toContain('The trash is empty.');
  });
});
