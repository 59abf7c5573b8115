/**
 * The web's upload (the project page's form, and scripts posting to it with a session) whose body is still arriving
 * when what lets it in ends — the session signed out, the account disabled, the share removed: nothing of it is
 * stored (no document, no original, no temp file), as for the API's upload (test/documents/races-trash.test.ts).
 * It was: the session and the project were asked before the body only. Real daemon, raw HTTP for the slow body.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { heldUpload } from '../helpers/held-upload.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { storedFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn, type WebClient } from '../server/web-client.js';

describe("a web upload that outlives what let it in", () => {
  let d: Daemon;
  let alice: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  const project = async (name: string): Promise<string> => {
    const res = await api(d, '/api/v1/projects', { token: alice.apiKey, body: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const documentsOf = async (projectId: string) =>
    ((await api(d, `/api/v1/documents?project_id=${projectId}&limit=100`, { token: alice.apiKey })).body.documents as { filename: string }[]).map((x) => x.filename);

  /** Posts a file to `/projects/{id}/upload` as `web`'s session; `end` runs once its first bytes are in the temp folder. */
  const uploadOutliving = async (web: WebClient, projectId: string, tag: string, end: () => Promise<void>): Promise<number> => {
    await web.get(`/projects/${projectId}`);
    const csrf = web.csrf;
    const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return (await heldUpload(d, `/projects/${projectId}/upload`, { cookie }, { _csrf: csrf }, { name: `${tag}.txt`, text: `${prose(`outlived-web-${tag}`, 40)}\n` }, end)).status;
  };

  it('signed out in another tab while the upload arrives: sent to sign in, nothing stored', { timeout: 120_000 }, async () => {
    const p = await project('signed-out');
    const web = await loggedIn(d, alice);
    const other = await loggedIn(d, alice);
    other.cookies.set('ds_session', web.cookies.get('ds_session')!);
    const originals = storedFiles(d.dataDir).originals.length;
    const status = await uploadOutliving(web, p, 'signed-out', async () => {
      await other.get(`/projects/${p}`);
      expect([302, 303]).toContain((await other.post('/logout', { _csrf: other.csrf })).status);
    });
    expect([302, 303]).toContain(status);
    expect(await documentsOf(p)).toEqual([]);
    expect(storedFiles(d.dataDir).originals.length).toBe(originals);
    expect(storedFiles(d.dataDir).temp).toEqual([]);
  });

  it("a member's account disabled, or their share removed, while their upload arrives: nothing stored", { timeout: 120_000 }, async () => {
    for (const how of ['disabled', 'unshared'] as const) {
      const p = await project(`shared-${how}`);
      const bob = await addUser(d);
      const shared = await api(d, `/api/v1/projects/${p}/members`, { token: alice.apiKey, body: { email: bob.email, role: 'editor' } });
      expect(shared.status).toBe(201);
      const web = await loggedIn(d, bob);
      const originals = storedFiles(d.dataDir).originals.length;
      const status = await uploadOutliving(web, p, how, async () => {
        if (how === 'disabled') {
          const disabled = await runCli(['users', 'disable', bob.email, '--yes', '--data-dir', d.dataDir], { env: d.env });
          expect(disabled.code, disabled.stderr).toBe(0);
        } else expect((await api(d, `/api/v1/projects/${p}/members/${shared.body.id}`, { method: 'DELETE', token: alice.apiKey })).status).toBe(204);
      });
      expect(status, how).toBe(how === 'disabled' ? 302 : 404);
      expect(await documentsOf(p), how).toEqual([]);
      expect(storedFiles(d.dataDir).originals.length, how).toBe(originals);
      expect(storedFiles(d.dataDir).temp, how).toEqual([]);
    }
  });
});
