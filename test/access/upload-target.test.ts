/**
 * Where an upload without `project_id` goes for a key limited to projects (docs/api.md, `POST /upload`): into the one
 * project of its limit its user may edit. A limit whose projects the user only views is refused as a viewer is
 * (403), and nothing is stored in them; a limit with two editable projects asks which. The permission matrix names a
 * project in every upload, so this is the one place the limit's own choice is tested (a mutation that let it pick a
 * viewed project passed the whole matrix).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

describe('an upload without project_id through a key limited to projects', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  let viewed: string;
  let edited: string;
  let own: string;

  const project = async (who: TestUser, name: string) => (await api(d, '/api/v1/projects', { token: who.apiKey, body: { name } })).body.id as string;
  const limitedKey = async (projectIds: string[]) => {
    const made = await api(d, '/api/v1/keys', { token: bob.apiKey, body: { name: 'limited', project_ids: projectIds } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return made.body.key as string;
  };
  const documentsIn = async (projectId: string) =>
    ((await api(d, `/api/v1/documents?project_id=${projectId}`, { token: alice.apiKey })).body.documents as { filename: string }[]).map((x) => x.filename);

  beforeAll(async () => {
    d = await startDaemon();
    [alice, bob] = [await addUser(d), await addUser(d)];
    viewed = await project(alice, 'handbook');
    edited = await project(alice, 'budget');
    own = await project(bob, 'notes');
    for (const [id, role] of [[viewed, 'viewer'], [edited, 'editor']] as const) {
      const shared = await api(d, `/api/v1/projects/${id}/members`, { token: alice.apiKey, body: { email: bob.email, role } });
      expect(shared.status, JSON.stringify(shared.body)).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  const file = (name: string) => [{ name, bytes: Buffer.from(`The ${name} note lists who reads the handbook and who keeps the budget.\n`) }];

  it('is refused when every project of the limit is one its user only views, and stores nothing there', async () => {
    const key = await limitedKey([viewed]);
    const up = await uploadFiles(d, key, file('viewer-only.txt'));
    expect(up.status, JSON.stringify(up.body)).toBe(403);
    expect(up.body.error).toMatchObject({ code: 'forbidden', details: { role: 'viewer', required_role: 'editor' } });
    expect(await documentsIn(viewed)).toEqual([]);
  });

  it('goes to the one project of the limit its user may edit, not to one they view', async () => {
    const key = await limitedKey([viewed, edited]);
    const up = await uploadFiles(d, key, file('budget-note.txt'));
    expect(up.status, JSON.stringify(up.body)).toBe(202);
    expect(up.body.documents[0].project_id).toBe(edited);
    expect(await documentsIn(edited)).toEqual(['budget-note.txt']);
    expect(await documentsIn(viewed)).toEqual([]);
  });

  it('asks which when the limit holds two projects its user may edit', async () => {
    const key = await limitedKey([edited, own]);
    const up = await uploadFiles(d, key, file('which.txt'));
    expect(up.status, JSON.stringify(up.body)).toBe(400);
    expect(up.body.error.message).toBe('this key is limited to projects: name one with project_id');
    expect(up.body.error.details.project_ids.sort()).toEqual([edited, own].sort());
  });
});
