/**
 * `docsearch documents retry|rename|move` and documents named by path or file name (#53 item 8), through the built
 * binary against a real daemon; a renamed synced document shows its new name in FILENAME; tables fit a terminal of 80
 * and of 120 columns (a real pseudo-terminal from util-linux `script`), cutting names with "…" rather than wrapping;
 * upload's progress board shows a path whole where the terminal has room for it; `upload --label` and
 * `documents label DOC… add NAME… remove NAME…` (issue 60) set labels that the API and the label filter then see;
 * refused words change nothing; a renamed label stays on its documents under its new name, and a moved document
 * keeps its labels' names in its new project, where search's label filter finds it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, runCli } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliSuite } from './cli-env.js';
import { onTerminal } from './terminal.js';

describe('docsearch documents: retry, rename, move, names, tables that fit', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });
  const temp = tempDirs('docsearch-documents');
  afterAll(() => temp.removeAll());

  it('retries, renames and moves documents named by id, sync path or file name; FILENAME shows the new name', { timeout: 300_000 }, async () => {
    const files = [
      { name: 'broken.pdf', bytes: Buffer.from('%PDF-1.7\nnot really a PDF after all\n') },
      { name: 'leave.txt', bytes: Buffer.from('Leave is booked in the HR system two weeks ahead.') },
    ];
    const up = await uploadFiles(s.d, s.user.apiKey, files, { query: '?wait=true', fields: { paths: JSON.stringify(['handbook/broken.pdf', 'handbook/leave.txt']) } });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const [broken, leave] = up.body.documents as { id: string; status: string }[];
    expect(broken!.status).toBe('failed');

    const shown = await runCli(['documents', 'show', 'handbook/leave.txt', '--json'], { env: s.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).id).toBe(leave!.id);
    expect(JSON.parse((await runCli(['documents', 'show', 'leave.txt', '--json'], { env: s.env })).stdout).id).toBe(leave!.id);
    const unknown = await runCli(['documents', 'show', 'nothing-like-it.txt'], { env: s.env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('"nothing-like-it.txt" not found');

    const refused = await runCli(['documents', 'retry', 'leave.txt'], { env: s.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('only a failed document can be retried: leave.txt is ready');
    const retried = await runCli(['documents', 'retry', 'broken.pdf'], { env: s.env });
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stderr).toContain(`queued handbook/broken.pdf (${broken!.id}) again`);

    const renamed = await runCli(['documents', 'rename', 'handbook/leave.txt', 'Leave policy.txt'], { env: s.env });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect((await api(s.d, `/api/v1/documents/${leave!.id}`, { token: s.user.apiKey })).body.filename).toBe('Leave policy.txt');
    const listed = await runCli(['documents', 'list'], { env: s.env });
    expect(listed.stdout).toContain(`${leave!.id}\thandbook/Leave policy.txt\t`);

    expect((await runCli(['projects', 'create', 'archive'], { env: s.env })).code).toBe(0);
    const moved = await runCli(['documents', 'move', 'Leave policy.txt', '--to', 'archive'], { env: s.env });
    expect(moved.code, moved.stderr).toBe(0);
    const project = (await api(s.d, `/api/v1/documents/${leave!.id}`, { token: s.user.apiKey })).body.project_id;
    expect((await api(s.d, `/api/v1/projects/${project}`, { token: s.user.apiKey })).body.name).toBe('archive');
  });

  it('fits documents list and auth status to 80 and to 120 columns', { timeout: 120_000 }, async () => {
    const long = 'quarterly maintenance schedule for the northern lighthouse keepers association and its many volunteers';
    await uploadFiles(s.d, s.user.apiKey, [{ name: `${long}.txt`, bytes: Buffer.from('The lens was polished before the winter storms.') }], {
      query: '?wait=true',
      fields: { paths: JSON.stringify([`archives/a folder with a rather long name/${long}.txt`]) },
    });
    for (const cols of [80, 120]) {
      for (const args of [['documents', 'list'], ['auth', 'status']]) {
        const out = await onTerminal(cols, args, s.env);
        const lines = out.split('\n').filter((l) => l.trim());
        expect(lines.length, out).toBeGreaterThan(1);
        for (const line of lines) expect(line.replace(/\x1b\[[0-9;]*m/g, '').length, `${args.join(' ')} at ${cols}: ${line}`).toBeLessThanOrEqual(cols);
      }
    }
  });

  it('upload progress shows a path whole where the terminal has room, and cuts it at its left only where it has not', { timeout: 120_000 }, async () => {
    const work = temp.make('board');
    const path = 'reports/2025/quarterly/north-region/lighthouse-maintenance-schedule.txt'; // 70 columns
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), 'The keepers polish the lens every Sunday before dusk.');
    // The rows of the board's final state (a file's outcome), without the control sequences that redraw it.
    const finalRows = async (cols: number) => {
      const out = await onTerminal(cols, ['upload', 'reports', '--recursive', '--wait'], s.env, work);
      return out.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')).filter((l) => /  (ready|already uploaded) \(/.test(l));
    };
    const wide = await finalRows(120);
    expect(wide.at(-1), wide.join('\n')).toMatch(new RegExp(`^${path.replaceAll('.', '\\.')}  +(ready|already uploaded)`));
    const narrow = await finalRows(80);
    const row = narrow.at(-1)!;
    expect(row, narrow.join('\n')).toMatch(/^…[^ ]*\/lighthouse-maintenance-schedule\.txt  +(ready|already uploaded)/);
    expect(row.length).toBeLessThanOrEqual(80);
  });

  it('labels documents: upload --label, documents label … add … remove …, its --json, and bad words refused', { timeout: 120_000 }, async () => {
    const work = temp.make('labels');
    writeFileSync(join(work, 'invoice-4711.txt'), 'Invoice 4711 for the harbour crane inspection, due in March.');
    writeFileSync(join(work, 'invoice-4712.txt'), 'Invoice 4712 for the lighthouse lamp replacement, due in April.');
    const up = await runCli(['upload', join(work, 'invoice-4711.txt'), join(work, 'invoice-4712.txt'), '--wait', '--label', 'Finance', '--label', 'unpaid', '--json'], { env: s.env });
    expect(up.code, up.stderr).toBe(0);
    const [a, b] = (JSON.parse(up.stdout).documents as { id: string }[]).map((d) => d.id);
    const labelsOf = async (id: string) => (await api(s.d, `/api/v1/documents/${id}`, { token: s.user.apiKey })).body.labels as string[];
    expect(await labelsOf(a!)).toEqual(['Finance', 'unpaid']);

    // Both documents at once, by file name and by id; a name in another case is the label already there.
    const changed = await runCli(['documents', 'label', 'invoice-4711.txt', b!, 'add', 'urgent,FINANCE', 'remove', 'unpaid'], { env: s.env });
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stderr).toContain(`labelled invoice-4711.txt (${a}): Finance, urgent`);
    for (const id of [a!, b!]) expect(await labelsOf(id)).toEqual(['Finance', 'urgent']);
    const filtered = await api(s.d, '/api/v1/documents?labels=urgent', { token: s.user.apiKey });
    expect((filtered.body.documents as { id: string }[]).map((d) => d.id).sort()).toEqual([a!, b!].sort());
    expect((await api(s.d, '/api/v1/documents?labels=unpaid', { token: s.user.apiKey })).body.documents).toEqual([]);

    const json = await runCli(['documents', 'label', a!, 'remove', 'urgent', '--json'], { env: s.env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).documents.map((d: { id: string; labels: string[] }) => [d.id, d.labels])).toEqual([[a!, ['Finance']]]);
    const shown = await runCli(['documents', 'label', b!], { env: s.env });
    expect(shown.stdout).toContain(`invoice-4712.txt (${b}): Finance, urgent`);

    const none = await runCli(['documents', 'label', 'add', 'x'], { env: s.env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('name at least one document before add or remove');
    const both = await runCli(['documents', 'label', a!, 'add', 'x', 'remove', 'X'], { env: s.env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('label "x" is both added and removed');
    const bad = await runCli(['documents', 'label', a!, 'add', 'x'.repeat(65)], { env: s.env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/labels.*64 characters/);
    // Refused words change nothing: the documents keep their labels, and no name joined the vocabulary.
    expect(await labelsOf(a!)).toEqual(['Finance']);
    expect(await labelsOf(b!)).toEqual(['Finance', 'urgent']);
    const project = (await api(s.d, `/api/v1/documents/${a}`, { token: s.user.apiKey })).body.project_id as string;
    const vocabulary = async (projectId: string) =>
      Object.fromEntries(((await api(s.d, `/api/v1/projects/${projectId}/labels`, { token: s.user.apiKey })).body.labels as { name: string; document_count: number }[]).map((l) => [l.name, l.document_count]));
    expect(Object.keys(await vocabulary(project)).some((name) => name.toLowerCase() === 'x' || name.length > 64)).toBe(false);
    // Removing a label a document lacks does nothing.
    const lacking = await runCli(['documents', 'label', a!, 'remove', 'urgent'], { env: s.env });
    expect(lacking.code, lacking.stderr).toBe(0);
    expect(await labelsOf(a!)).toEqual(['Finance']);

    /** The documents a keyword search of `query` finds with these filters, in these projects. */
    const found = async (query: string, filters: object, projectIds?: string[]) => {
      const res = await api(s.d, '/api/v1/search', { token: s.user.apiKey, body: { query, mode: 'keyword', filters, ...(projectIds ? { project_ids: projectIds } : {}) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return [...new Set((res.body.results as { document: { id: string } }[]).map((r) => r.document.id))].sort();
    };
    // A renamed label: the documents carrying it keep it under its new name, in lists, the CLI and search (api.md#labels).
    const urgent = ((await api(s.d, `/api/v1/projects/${project}/labels`, { token: s.user.apiKey })).body.labels as { id: string; name: string }[]).find((l) => l.name === 'urgent')!;
    expect((await api(s.d, `/api/v1/projects/${project}/labels/${urgent.id}`, { method: 'PATCH', token: s.user.apiKey, body: { name: 'Overdue' } })).status).toBe(200);
    expect(await labelsOf(b!)).toEqual(['Finance', 'Overdue']);
    expect((await runCli(['documents', 'label', b!], { env: s.env })).stdout).toContain(`invoice-4712.txt (${b}): Finance, Overdue`);
    expect(((await api(s.d, '/api/v1/documents?labels=overdue', { token: s.user.apiKey })).body.documents as { id: string }[]).map((x) => x.id)).toEqual([b!]);
    expect((await api(s.d, '/api/v1/documents?labels=urgent', { token: s.user.apiKey })).body.documents).toEqual([]);
    expect(await found('invoice', { labels: 'overdue' })).toEqual([b!]);
    expect(await found('invoice', { labels: 'urgent' })).toEqual([]);

    // A moved document keeps its labels' names in its new project (made in its vocabulary), and search finds it
    // there by them at once; it leaves the old project's counts.
    expect((await runCli(['projects', 'create', 'ledgers'], { env: s.env })).code).toBe(0);
    const movedTo = await runCli(['documents', 'move', b!, '--to', 'ledgers'], { env: s.env });
    expect(movedTo.code, movedTo.stderr).toBe(0);
    const ledgers = (await api(s.d, `/api/v1/documents/${b}`, { token: s.user.apiKey })).body.project_id as string;
    expect(ledgers).not.toBe(project);
    expect(await labelsOf(b!)).toEqual(['Finance', 'Overdue']);
    expect(await vocabulary(ledgers)).toEqual({ Finance: 1, Overdue: 1 });
    expect(await vocabulary(project)).toMatchObject({ Finance: 1, Overdue: 0 });
    expect(await found('invoice', { labels: 'overdue' }, [ledgers])).toEqual([b!]);
    expect(await found('invoice', { labels: ['finance', 'overdue'] })).toEqual([b!]);
    expect(await found('invoice', { labels: 'finance' }, [project])).toEqual([a!]);
    expect(await found('invoice', { labels: 'finance' }, [ledgers])).toEqual([b!]);
  });
});
