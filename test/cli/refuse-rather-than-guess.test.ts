/**
 * Commands that must refuse, or keep things as they are, rather than act on a guess, through the built binary against
 * a real daemon: a file name two documents share is refused even when one of them lies past the first page of
 * documents whose names contain it; `trash purge NAME --all` is a usage error that purges nothing; a bad --language,
 * --ocr-languages or --label stops upload before anything is sent; `projects share` without --role leaves a member's
 * role alone and makes someone new a viewer.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, runCli, type TestUser } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliSuite } from './cli-env.js';

describe('docsearch commands refuse rather than guess', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });
  const temp = tempDirs('docsearch-refuse');
  afterAll(() => temp.removeAll());

  const cli = (args: string[]) => runCli(args, { env: s.env });
  const projectId = async (name: string): Promise<string> => {
    const made = await api(s.d, '/api/v1/projects', { token: s.user.apiKey, body: { name } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body.id as string;
  };
  const upload = async (files: { name: string; bytes: Buffer }[], project: string): Promise<string[]> => {
    const up = await uploadFiles(s.d, s.user.apiKey, files, { projectId: project });
    expect(up.status, JSON.stringify(up.body)).toBeLessThan(300);
    return (up.body.documents as { id: string }[]).map((d) => d.id);
  };

  it('refuses a file name two documents share when one lies past the first page of names containing it', { timeout: 300_000 }, async () => {
    const [alpha, beta] = [await projectId('alpha'), await projectId('beta')];
    // Oldest first: one exact match on the first page, 105 names that only contain it, the other exact match after them.
    const [first] = await upload([{ name: 'notes.txt', bytes: Buffer.from('The first notes, about harbour cranes.') }], alpha);
    for (let batch = 0; batch < 105; batch += 15) {
      const files = Array.from({ length: 15 }, (_, i) => ({ name: `notes.txt-${batch + i}.txt`, bytes: Buffer.from(`Copy ${batch + i} of the notes on lighthouses.`) }));
      await upload(files, alpha);
    }
    const [second] = await upload([{ name: 'notes.txt', bytes: Buffer.from('The second notes, about tide tables.') }], beta);

    const deleted = await cli(['documents', 'delete', 'notes.txt', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(1);
    expect(deleted.stderr).toContain('2 documents are named "notes.txt"');
    expect(deleted.stderr).toContain(first!);
    expect(deleted.stderr).toContain(second!);
    for (const id of [first, second]) expect((await api(s.d, `/api/v1/documents/${id}`, { token: s.user.apiKey })).status).toBe(200);
    expect((await api(s.d, '/api/v1/trash', { token: s.user.apiKey })).body.documents).toEqual([]);
  });

  it('refuses trash purge NAME --all as a usage error, purging nothing', { timeout: 120_000 }, async () => {
    const project = await projectId('bin');
    const ids = await upload(
      [
        { name: 'gone.txt', bytes: Buffer.from('A page to purge for good.') },
        { name: 'kept.txt', bytes: Buffer.from('A page to keep in the trash.') },
      ],
      project,
    );
    for (const id of ids) expect((await api(s.d, `/api/v1/documents/${id}`, { method: 'DELETE', token: s.user.apiKey })).status).toBeLessThan(300);

    const purged = await cli(['trash', 'purge', 'gone.txt', '--all', '--yes']);
    expect(purged.code, purged.stderr).toBe(2);
    expect(purged.stderr).toContain('--all');
    const trash = (await api(s.d, `/api/v1/trash?project_id=${project}`, { token: s.user.apiKey })).body.documents as { id: string }[];
    expect(trash.map((d) => d.id).sort()).toEqual([...ids].sort());
  });

  it('stops upload on a bad --language, --ocr-languages or --label before sending anything', { timeout: 180_000 }, async () => {
    const dir = temp.make('upload');
    mkdirSync(join(dir, 'in'));
    const paths = ['a', 'b', 'c'].map((n) => join(dir, 'in', `${n}-settings.txt`));
    paths.forEach((p, i) => writeFileSync(p, `Settings page ${i} about the ferry timetable.`));

    for (const [flag, value] of [
      ['--language', 'english'],
      ['--ocr-languages', 'english'],
      ['--label', 'x,y'],
    ] as const) {
      const res = await cli(['upload', ...paths, '--project', 'settings', '--create-project', flag, value]);
      expect(res.code, `${flag} ${value}: ${res.stderr}`).toBe(2);
      expect(res.stderr).toContain(`option '${flag} `);
      expect(res.stderr).not.toContain('failed');
    }
    // Nothing reached the server: not the project --create-project would have made, nor a document.
    const projects = (await api(s.d, '/api/v1/projects', { token: s.user.apiKey })).body.projects as { name: string }[];
    expect(projects.map((p) => p.name)).not.toContain('settings');
    expect((await api(s.d, '/api/v1/documents?filename=-settings.txt', { token: s.user.apiKey })).body.documents).toEqual([]);

    // The values the server takes still pass, as it reads them (any case for the language).
    const ok = await cli(['upload', paths[0]!, '--project', 'settings', '--create-project', '--language', 'DE', '--ocr-languages', 'deu+eng', '--label', 'ferry', '--label', 'timetable']);
    expect(ok.code, ok.stderr).toBe(0);
    const [doc] = (await api(s.d, '/api/v1/documents?filename=a-settings.txt', { token: s.user.apiKey })).body.documents as { labels: string[] }[];
    expect([...doc!.labels].sort()).toEqual(['ferry', 'timetable']);
  });

  describe('projects share without --role', () => {
    let bob: TestUser;
    let carol: TestUser;
    beforeAll(async () => {
      bob = await addUser(s.d);
      carol = await addUser(s.d);
    });
    const roles = async () => {
      const res = await cli(['projects', 'members', 'crew', '--json']);
      expect(res.code, res.stderr).toBe(0);
      return Object.fromEntries((JSON.parse(res.stdout).members as { email?: string; role: string }[]).map((m) => [m.email, m.role]));
    };

    it('keeps an existing member\'s role and makes someone new a viewer', { timeout: 120_000 }, async () => {
      expect((await cli(['projects', 'create', 'crew'])).code).toBe(0);
      expect((await cli(['projects', 'share', 'crew', bob.email, '--role', 'editor'])).code).toBe(0);

      const again = await cli(['projects', 'share', 'crew', bob.email.toUpperCase()]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toBe(`${bob.email} is already editor of project crew; role unchanged (give --role to change it)\n`);
      expect((await roles())[bob.email]).toBe('editor');

      const added = await cli(['projects', 'share', 'crew', carol.email]);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stderr).toBe(`shared project crew with ${carol.email} as viewer\n`);
      expect((await roles())[carol.email]).toBe('viewer');

      // --role still changes it.
      expect((await cli(['projects', 'share', 'crew', bob.email, '--role', 'viewer'])).stderr).toBe(`${bob.email} is now viewer of project crew\n`);
      expect((await roles())[bob.email]).toBe('viewer');
    });
  });
});
