import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { cliEnv, cliSuite } from './cli-env.js';

/**
 * Sharing from the command line, against a daemon: `projects share|unshare|members|transfer`, the ROLE and OWNER
 * of `projects list`, keys limited to projects, and project names two readable projects share (one shared with
 * the caller), which every command that takes a project refuses the same way.
 */
describe('docsearch projects share / unshare / members / transfer, keys --project', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let env: Record<string, string>;
  cliSuite((s) => ({ d, user: alice, env } = s));
  beforeAll(async () => {
    bob = await addUser(d);
    carol = await addUser(d);
  });

  const as = (who: TestUser) => (args: string[]) => runCli(args, { env: who === alice ? env : cliEnv(d, { DOCSEARCH_TOKEN: who.apiKey }) });
  const rows = (stdout: string) => stdout.trimEnd().split('\n').map((l) => l.split('\t'));

  it('shares with a person and a group, changes a role, lists members, unshares, and transfers', async () => {
    const cli = as(alice);
    expect((await cli(['projects', 'create', 'handbook'])).code).toBe(0);
    const group = await runCli(['groups', 'create', 'team', '--data-dir', d.dataDir], { env: d.env });
    expect(group.code, group.stderr).toBe(0);
    expect((await runCli(['groups', 'add', 'team', carol.email, '--data-dir', d.dataDir], { env: d.env })).code).toBe(0);

    const shared = await cli(['projects', 'share', 'handbook', bob.email, '--role', 'editor']);
    expect(shared.code, shared.stderr).toBe(0);
    expect(shared.stderr).toBe(`shared project handbook with ${bob.email} as editor\n`);
    const changed = await cli(['projects', 'share', 'HANDBOOK', bob.email.toUpperCase(), '--role', 'viewer']);
    expect(changed.stderr).toBe(`${bob.email} is now viewer of project handbook\n`);
    const json = await cli(['projects', 'share', 'handbook', 'group:team', '--json']); // viewer by default
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'group', group: 'team', role: 'viewer' });

    const members = await cli(['projects', 'members', 'handbook']);
    expect(members.code).toBe(0);
    expect(rows(members.stdout).map((r) => r.slice(1))).toEqual([
      [alice.email, 'user', 'owner'],
      [bob.email, 'user', 'viewer'],
      ['group:team', 'group', 'viewer'],
    ]);
    const id = (await api(d, '/api/v1/projects?limit=100', { token: alice.apiKey })).body.projects.find((p: { name: string }) => p.name === 'handbook').id;
    const wire = await api(d, `/api/v1/projects/${id}/members`, { token: alice.apiKey });
    expect(JSON.parse((await cli(['projects', 'members', id, '--json'])).stdout)).toEqual(wire.body);
    expect(JSON.parse((await cli(['projects', 'members', 'handbook', '--json', 'email,role'])).stdout).members[1]).toEqual({ email: bob.email, role: 'viewer' });

    // Bob and Carol see it with their role and its owner; a viewer may not list or change its members.
    for (const who of [bob, carol]) {
      const list = await as(who)(['projects']);
      expect(rows(list.stdout).find((r) => r[1] === 'handbook')!.slice(2, 4)).toEqual(['viewer', alice.email]);
    }
    const nosy = await as(bob)(['projects', 'members', 'handbook']);
    expect(nosy.code).toBe(1);
    expect(nosy.stderr).toBe('error: your role on this project is viewer: this needs owner\n');

    // Refusals, each in one line.
    const nobody = await cli(['projects', 'share', 'handbook', 'nobody@example.com']);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toBe('error: user with e-mail nobody@example.com not found\n');
    const role = await cli(['projects', 'share', 'handbook', bob.email, '--role', 'admin']);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain("argument 'admin' is invalid. Allowed choices are viewer, editor, owner.");
    const stranger = await cli(['projects', 'unshare', 'handbook', 'nobody@example.com']);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toBe('error: nobody@example.com is not a member of project handbook\nhint: see its members with `docsearch projects members "handbook"`\n');
    const ofRecord = await cli(['projects', 'unshare', 'handbook', alice.email]);
    expect(ofRecord.code).toBe(1);
    expect(ofRecord.stderr).toBe('error: the owner of record cannot be removed: transfer the project to someone else first\n');

    const unshared = await cli(['projects', 'unshare', 'handbook', 'group:TEAM']);
    expect(unshared.code, unshared.stderr).toBe(0);
    expect(unshared.stderr).toBe('stopped sharing project handbook with group:team; what they uploaded stays\n');
    expect(rows((await as(carol)(['projects'])).stdout).map((r) => r[1])).not.toContain('handbook');

    // Transfer: Bob becomes the owner of record; Alice stays an owner.
    const moved = await cli(['projects', 'transfer', 'handbook', bob.email]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stderr).toBe(`project handbook now belongs to ${bob.email}; its previous owner of record stays an owner until removed\n`);
    expect(rows((await as(bob)(['projects'])).stdout).find((r) => r[1] === 'handbook')!.slice(2, 4)).toEqual(['owner', bob.email]);
    expect(rows((await cli(['projects'])).stdout).find((r) => r[1] === 'handbook')!.slice(2, 4)).toEqual(['owner', bob.email]);
    expect(rows((await as(bob)(['projects', 'members', 'handbook'])).stdout).map((r) => [r[1], r[3]])).toEqual([
      [bob.email, 'owner'],
      [alice.email, 'owner'],
    ]);
  });

  it('a name two readable projects share is refused by every command that takes a project, listing both with their owners', async () => {
    expect((await as(carol)(['projects', 'create', 'notes'])).code).toBe(0);
    expect((await as(carol)(['projects', 'share', 'notes', alice.email])).code).toBe(0);
    const cli = as(alice);
    expect((await cli(['projects', 'create', 'notes'])).code).toBe(0);
    const listed = (await api(d, '/api/v1/projects?limit=100', { token: alice.apiKey })).body.projects.filter((p: { name: string }) => p.name === 'notes');
    const [mine, theirs] = [listed.find((p: { owner: string }) => p.owner === alice.email), listed.find((p: { owner: string }) => p.owner === carol.email)];
    const expected =
      `error: 2 of your projects are named "notes":\n  ${listed[0].id}  notes  owned by ${listed[0].owner}\n  ${listed[1].id}  notes  owned by ${listed[1].owner}\n` + 'hint: use the id\n';
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-ambiguous-'));
    writeFileSync(join(dir, 'a.txt'), 'Ambiguity is refused.\n');
    for (const args of [
      ['projects', 'show', 'notes'],
      ['projects', 'share', 'notes', bob.email],
      ['projects', 'members', 'notes'],
      ['search', 'x', '--project', 'notes'],
      ['documents', 'list', '--project', 'notes'],
      ['upload', join(dir, 'a.txt'), '--project', 'notes'],
      ['upload', dir, '--sync', '--dry-run', '--project', 'notes'],
      ['keys', 'create', '--project', 'notes'],
    ]) {
      const res = await cli(args);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr, args.join(' ')).toBe(expected);
    }
    // By id each is found.
    expect(JSON.parse((await cli(['projects', 'show', mine.id, '--json'])).stdout)).toMatchObject({ owner: alice.email, role: 'owner' });
    expect(JSON.parse((await cli(['projects', 'show', theirs.id, '--json'])).stdout)).toMatchObject({ owner: carol.email, role: 'viewer' });
    expect((await cli(['search', 'x', '--project', theirs.id])).code).toBe(0);
  });

  it("another person's default project shared with you is not yours: uploads without --project go to your own", async () => {
    expect((await as(alice)(['projects', 'share', 'default', bob.email, '--role', 'editor'])).code).toBe(0);
    const seen = (await api(d, '/api/v1/projects?limit=100', { token: bob.apiKey })).body.projects;
    const defaults = seen.filter((p: { is_default: boolean }) => p.is_default);
    expect(defaults.map((p: { owner: string }) => p.owner)).toEqual([bob.email]);
    expect(seen.find((p: { owner: string; name: string }) => p.owner === alice.email && p.name === 'default')).toMatchObject({ role: 'editor', is_default: false });

    const dir = mkdtempSync(join(tmpdir(), 'docsearch-default-'));
    writeFileSync(join(dir, 'mine.txt'), 'Bob keeps his own notes in his own default project.\n');
    const up = await as(bob)(['upload', join(dir, 'mine.txt'), '--json']);
    expect(up.code, up.stderr).toBe(0);
    const doc = JSON.parse(up.stdout).documents[0];
    expect(doc.project_id).toBe(defaults[0].id);
    // The CLI's sync plan reads the same project.
    const plan = await as(bob)(['upload', dir, '--sync', '--dry-run', '--json']);
    expect(JSON.parse(plan.stdout).project).toBe(defaults[0].id);
  });

  it('keys create --project limits a key to those projects; keys list shows the limit', async () => {
    const cli = as(alice);
    expect((await cli(['projects', 'create', 'reports'])).code).toBe(0);
    const up = await uploadFiles(d, alice.apiKey, [{ name: 'q3.txt', bytes: Buffer.from('Third quarter revenue rose by eleven percent.\n') }], {
      projectId: (await api(d, '/api/v1/projects?limit=100', { token: alice.apiKey })).body.projects.find((p: { name: string }) => p.name === 'reports').id,
      query: '?wait=true',
    });
    expect(up.body.documents[0].status).toBe('ready');
    // A matching text in her default project, which her own key finds and the limited key must not.
    const other = await uploadFiles(d, alice.apiKey, [{ name: 'q3-draft.txt', bytes: Buffer.from('Third quarter revenue draft: up by about ten percent.\n') }], { query: '?wait=true' });
    expect(other.body.documents[0].status).toBe('ready');
    const own = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'revenue in the third quarter' } });
    expect(own.body.results.map((r: { document: { filename: string } }) => r.document.filename)).toEqual(expect.arrayContaining(['q3-draft.txt', 'q3.txt']));

    const created = await cli(['keys', 'create', '--name', 'reports-only', '--project', 'reports', '--scopes', 'read:documents']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toMatch(/^created API key key_\w+ \(read:documents, only for reports\) — shown once, store it now:\n$/);
    const key = created.stdout.trim();
    const listed = await api(d, '/api/v1/projects', { token: key });
    expect(listed.body.projects.map((p: { name: string }) => p.name)).toEqual(['reports']);
    const hits = await api(d, '/api/v1/search', { token: key, body: { query: 'revenue in the third quarter' } });
    expect(hits.body.results.map((r: { document: { filename: string } }) => r.document.filename)).toEqual(['q3.txt']);

    const keys = rows((await cli(['keys', 'list'])).stdout);
    expect(keys.find((r) => r[1] === 'reports-only')![4]).toBe('reports');
    expect(keys.filter((r) => r[1] !== 'reports-only').every((r) => r[4] === 'all')).toBe(true);
    const json = JSON.parse((await cli(['keys', 'list', '--json'])).stdout).keys.find((k: { name: string }) => k.name === 'reports-only');
    expect(json.project_ids).toEqual([listed.body.projects[0].id]);

    const two = await cli(['keys', 'create', '--name', 'two', '--project', 'reports', '--project', 'default', '--json']);
    expect(JSON.parse(two.stdout).project_ids).toHaveLength(2);
    const missing = await cli(['keys', 'create', '--project', 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`error: project "nope" not found on ${d.url}\nhint: see your projects with \`docsearch projects list\`\n`);
  });
});
