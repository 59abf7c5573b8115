/**
 * Commands that act on several documents (`documents move|delete|retry|label`, `trash restore|purge`) go on past
 * one the server refuses: every named document is tried, each done one is said, the refused ones are named with
 * the server's reason (and listed under `failed` with `--json`), and the exit is 1. Through the built binary
 * against a real daemon.
 */
import { describe, expect, it } from 'vitest';
import { api, runCli } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliSuite } from './cli-env.js';

describe('docsearch commands over several documents: one refused, the rest done', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });

  const project = async (name: string): Promise<string> => {
    const res = await api(s.d, '/api/v1/projects', { token: s.user.apiKey, body: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const upload = async (projectId: string, files: { name: string; text: string }[], paths?: string[]): Promise<string[]> => {
    const up = await uploadFiles(s.d, s.user.apiKey, files.map((f) => ({ name: f.name, bytes: Buffer.from(f.text) })), {
      projectId,
      query: '?wait=true',
      ...(paths ? { fields: { paths: JSON.stringify(paths) } } : {}),
    });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return (up.body.documents as { id: string }[]).map((d) => d.id);
  };
  const projectOf = async (id: string): Promise<string> => (await api(s.d, `/api/v1/documents/${id}`, { token: s.user.apiKey })).body.project_id;

  it('documents move: the one the target already holds fails, the others move; --json lists done and failed', { timeout: 120_000 }, async () => {
    const [desk, arch] = [await project('desk'), await project('arch')];
    const [one, two, three] = await upload(desk, [
      { name: 'one.txt', text: 'Alpha: the first note on the desk.' },
      { name: 'two.txt', text: 'Bravo: the archive holds these very bytes already.' },
      { name: 'three.txt', text: 'Charlie: the third note on the desk.' },
    ]);
    await upload(arch, [{ name: 'copy.txt', text: 'Bravo: the archive holds these very bytes already.' }]);

    const res = await runCli(['documents', 'move', 'one.txt', two!, 'three.txt', '--to', 'arch', '--json'], { env: s.env });
    expect(res.code, res.stderr).toBe(1);
    const out = JSON.parse(res.stdout);
    expect(out.documents.map((d: { id: string }) => d.id)).toEqual([one, three]);
    expect(out.failed).toHaveLength(1);
    expect(out.failed[0]).toMatchObject({ id: two, name: 'two.txt' });
    // The failure is wrapped to the terminal's width; its words are the server's.
    expect(res.stderr.replace(/\s+/g, ' ')).toContain(`1 of 3 documents failed: two.txt (${two}): ${out.failed[0].error}`);
    expect(out.failed[0].error).toContain('already holds the same file');
    expect([await projectOf(one!), await projectOf(two!), await projectOf(three!)]).toEqual([arch, desk, arch]);
  });

  it('trash restore: the one whose path another document took fails, the next is restored and said', { timeout: 120_000 }, async () => {
    const notes = await project('notes');
    const [r1, r2] = await upload(notes, [
      { name: 'r1.txt', text: 'Restore me first, if the path is still free.' },
      { name: 'r2.txt', text: 'Restore me second.' },
    ], ['notes/r1.txt', 'notes/r2.txt']);
    for (const id of [r1, r2]) expect((await api(s.d, `/api/v1/documents/${id}`, { token: s.user.apiKey, method: 'DELETE' })).status).toBeLessThan(300);
    await upload(notes, [{ name: 'r1.txt', text: 'A new document at the old path.' }], ['notes/r1.txt']);

    const res = await runCli(['trash', 'restore', r1!, r2!], { env: s.env });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`restored notes/r2.txt (${r2}): searchable again`);
    expect(res.stderr).toMatch(new RegExp(`1 of 2 documents failed:\\n  notes/r1\\.txt \\(${r1}\\): \\S`));
    expect((await api(s.d, `/api/v1/documents/${r2}`, { token: s.user.apiKey })).status).toBe(200);
    expect((await api(s.d, `/api/v1/documents/${r1}`, { token: s.user.apiKey })).status).toBe(404);
  });
});
