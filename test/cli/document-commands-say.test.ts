/**
 * Document commands say what they did, through the built binary against real daemons: `documents label DOC add`
 * with no name is a usage error, not a silent exit 0; `whoami --json` says whether the account is an admin and which
 * projects a key is limited to, as /me does; an upload the project already holds merges its --metadata over the
 * document's (the server does, as it adds the labels) and says that --label labelled it; names in either Unicode spelling (macOS file names are decomposed) find the same
 * document and project; and `documents delete` tells the truth about the trash, also when the server keeps none
 * (`--trash-days 0`: deleted for good).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, runCli } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliSuite } from './cli-env.js';

const temp = tempDirs('docsearch-say');
afterAll(() => temp.removeAll());

/** "Café" as macOS writes it (e + U+0301) and as it is typed elsewhere (U+00E9). */
const NFD = 'Cafe\u0301';
const NFC = 'Caf\u00e9';

describe('docsearch document commands say what they did', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });

  const project = async (name: string): Promise<string> => {
    const res = await api(s.d, '/api/v1/projects', { token: s.user.apiKey, body: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const uploaded = async (name: string, text: string, fields: Record<string, string> = {}): Promise<{ id: string; filename: string; path: string | null }> => {
    const up = await uploadFiles(s.d, s.user.apiKey, [{ name, bytes: Buffer.from(text) }], { query: '?wait=true', fields });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    return up.body.documents[0];
  };
  const doc = async (id: string) => (await api(s.d, `/api/v1/documents/${id}`, { token: s.user.apiKey })).body;

  it('documents label DOC add (or remove) with no label name is a usage error naming what is missing', { timeout: 120_000 }, async () => {
    const d = await uploaded('labels.txt', 'A note to be labelled, or not.');
    expect((await runCli(['documents', 'label', d.id, 'add', 'kept'], { env: s.env })).code).toBe(0);
    for (const words of [['add'], ['remove'], ['add', ','], ['add', 'fine', 'remove']]) {
      const res = await runCli(['documents', 'label', d.id, ...words], { env: s.env });
      expect(res.code, `${words.join(' ')}: ${res.stderr}`).toBe(2);
      const verb = words.at(-1) === 'remove' ? 'remove' : 'add';
      expect(res.stderr).toContain(`${verb} needs at least one label name after it`);
    }
    // Nothing was changed by the refused ones (not even the "fine" before an empty remove).
    expect((await doc(d.id)).labels).toEqual(['kept']);
    // Without add or remove it still shows the labels.
    const shown = await runCli(['documents', 'label', d.id], { env: s.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('labels.txt');
    expect(shown.stdout).toContain('kept');
  });

  it('whoami --json gives admin and project_ids as /me does; the plain output says them too', { timeout: 120_000 }, async () => {
    const me = (await api(s.d, '/api/v1/me', { token: s.user.apiKey })).body;
    expect(typeof me.admin).toBe('boolean');
    const full = await runCli(['whoami', '--json'], { env: s.env });
    expect(full.code, full.stderr).toBe(0);
    expect(JSON.parse(full.stdout)).toMatchObject({ verified: true, admin: me.admin, project_ids: null });
    const plain = await runCli(['whoami'], { env: s.env });
    expect(plain.stdout).toMatch(new RegExp(`^admin\\t${me.admin ? 'yes' : 'no'}$`, 'm'));
    expect(plain.stdout).toMatch(/^projects\tevery project the account may read$/m);

    const ledger = await project('ledger');
    const key = await api(s.d, '/api/v1/keys', { token: s.user.apiKey, body: { name: 'ledger only', project_ids: [ledger] } });
    expect(key.status, JSON.stringify(key.body)).toBe(201);
    const env = { ...s.env, DOCSEARCH_TOKEN: key.body.key as string };
    const limited = await runCli(['whoami', '--json'], { env });
    expect(limited.code, limited.stderr).toBe(0);
    expect(JSON.parse(limited.stdout)).toMatchObject({ admin: me.admin, project_ids: [ledger] });
    const limitedPlain = await runCli(['whoami'], { env });
    expect(limitedPlain.stdout).toMatch(new RegExp(`^projects\\tonly ledger \\(${ledger}\\)$`, 'm'));
  });

  it('upload of a file the project holds merges --metadata over its own and says that --label labelled it', { timeout: 180_000 }, async () => {
    const dir = temp.make('dup');
    const file = join(dir, 'minutes.txt');
    writeFileSync(file, 'Minutes of the harbour board: the pier opens in May.');
    const first = await runCli(['upload', file, '--metadata', '{"board":"harbour","year":2025}', '--wait', '--json'], { env: s.env });
    expect(first.code, first.stderr).toBe(0);
    const id = JSON.parse(first.stdout).documents[0].id as string;

    const again = await runCli(['upload', file, '--metadata', '{"year":2026}', '--label', 'minutes'], { env: s.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr.replace(/\s+/g, ' ')).toContain(`${file}: already uploaded as ${id}; labelled minutes`);
    expect(again.stderr).not.toContain('metadata');
    const after = await doc(id);
    expect(after.metadata).toEqual({ board: 'harbour', year: 2026 });
    expect(after.labels).toEqual(['minutes']);

    // Under --json stdout stays the one JSON document, the document as it is now.
    const json = await runCli(['upload', file, '--metadata', '{"year":2027}', '--json'], { env: s.env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).documents[0]).toMatchObject({ id, duplicate: true, metadata: { board: 'harbour', year: 2027 } });
    expect(json.stderr).toBe('');
  });

  it('a name finds its document and project in either Unicode spelling', { timeout: 180_000 }, async () => {
    // Uploaded from a macOS-named file: the server keeps the name composed.
    const menu = await uploaded(`${NFD} menu.txt`, 'The cafe serves soup on Mondays.');
    expect(menu.filename).toBe(`${NFC} menu.txt`);
    for (const typed of [NFC, NFD]) {
      const res = await runCli(['documents', 'show', `${typed} menu.txt`, '--json'], { env: s.env });
      expect(res.code, `${typed === NFC ? 'NFC' : 'NFD'}: ${res.stderr}`).toBe(0);
      expect(JSON.parse(res.stdout).id).toBe(menu.id);
    }

    // A sync path keeps its spelling (it is what a sync compares): typed the other way, it still names the document.
    const hours = await uploaded('hours.txt', 'The cafe opens at seven.', { paths: JSON.stringify([`${NFD}/hours.txt`]) });
    expect(hours.path).toBe(`${NFD}/hours.txt`);
    const byPath = await runCli(['documents', 'show', `${NFC}/hours.txt`, '--json'], { env: s.env });
    expect(byPath.code, byPath.stderr).toBe(0);
    expect(JSON.parse(byPath.stdout).id).toBe(hours.id);

    // A name given decomposed since (rename) is found typed composed.
    expect((await api(s.d, `/api/v1/documents/${hours.id}`, { token: s.user.apiKey, method: 'PATCH', body: { filename: `${NFD} hours.txt` } })).status).toBe(200);
    const renamed = await runCli(['documents', 'show', `${NFC} hours.txt`, '--json'], { env: s.env });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(JSON.parse(renamed.stdout).id).toBe(hours.id);

    // A project named on macOS, named composed at the CLI.
    const terrace = await project(`${NFD} terrace`);
    const moved = await runCli(['documents', 'move', menu.id, '--to', `${NFC} terrace`], { env: s.env });
    expect(moved.code, moved.stderr).toBe(0);
    expect((await doc(menu.id)).project_id).toBe(terrace);
  });

  it('documents delete says the trash keeps them for the server\'s --trash-days, restorable', { timeout: 120_000 }, async () => {
    expect((await api(s.d, '/api/v1/trash?limit=1', { token: s.user.apiKey })).body.retention_days).toBe(30);
    const d = await uploaded('trashed.txt', 'Soon in the trash, for a while.');
    const asked = await runCli(['documents', 'delete', d.id], { env: s.env });
    expect(asked.code).toBe(2);
    expect(asked.stderr.replace(/\s+/g, ' ')).toContain('waits in the trash (`docsearch trash`) for 30 days, where `docsearch trash restore` brings it back');
    const res = await runCli(['documents', 'delete', d.id, '--yes'], { env: s.env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe(`deleted trashed.txt (${d.id}): restore it with \`docsearch trash restore ${d.id}\`\n`);
    expect((await api(s.d, `/api/v1/trash?limit=100`, { token: s.user.apiKey })).body.documents.map((e: { id: string }) => e.id)).toContain(d.id);
  });
});

describe('docsearch documents delete on a server that keeps no trash (--trash-days 0)', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000, args: ['--trash-days', '0'] });

  it('says the documents are deleted for good, in the prompt, the output and --json', { timeout: 120_000 }, async () => {
    expect((await api(s.d, '/api/v1/trash?limit=1', { token: s.user.apiKey })).body.retention_days).toBe(0);
    const up = await uploadFiles(s.d, s.user.apiKey, [
      { name: 'gone.txt', bytes: Buffer.from('Deleted for good, no trash here.') },
      { name: 'also-gone.txt', bytes: Buffer.from('Deleted for good as well.') },
    ], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const [gone, also] = (up.body.documents as { id: string }[]).map((d) => d.id);

    const asked = await runCli(['documents', 'delete', gone!, also!], { env: s.env });
    expect(asked.code).toBe(2);
    const prompt = asked.stderr.replace(/\s+/g, ' ');
    expect(prompt).toContain('The server keeps no trash (--trash-days 0): they are deleted for good at once and cannot be restored.');
    expect(prompt).not.toContain('wait in the trash');

    const res = await runCli(['documents', 'delete', gone!, '--yes'], { env: s.env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`deleted gone.txt (${gone}) for good: the server keeps no trash`);
    expect(res.stderr).not.toContain('trash restore');

    const json = await runCli(['documents', 'delete', also!, '--yes', '--json'], { env: s.env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ deleted: [also], failed: [], retention_days: 0 });
    for (const id of [gone, also]) expect((await api(s.d, `/api/v1/documents/${id}`, { token: s.user.apiKey })).status).toBe(404);
    expect((await api(s.d, '/api/v1/trash', { token: s.user.apiKey })).body.documents).toEqual([]);

    const help = await runCli(['documents', 'delete', '--help'], { env: s.env });
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('A server run with --trash-days 0 keeps no trash: there deleting is for good');
  });
});
