/**
 * The limits left counted apart (helper-119): a document's name is 255 characters on the upload (REST and the web
 * page) as on a rename; an e-mail address is 254 characters in every field that takes one; a source's settings take
 * in the web form what its API takes; and text cut to fit is cut between characters, never inside an emoji. The
 * daemon's first account is its admin.
 */
import { describe, expect, it } from 'vitest';
import { MAX_EMAIL_CHARS, MAX_FILENAME_CHARS, MAX_INVITES } from '../../src/core/name-limits.js';
import { MAX_GLOB_CHARS, MAX_GLOBS, MAX_SOURCE_SECRET_CHARS, MAX_SOURCE_URL_CHARS, MAX_SOURCE_USERNAME_CHARS } from '../../src/core/source-limits.js';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, runCli, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import type { WebClient } from '../server/web-client.js';
import { loggedIn, uploadAs } from './library-client.js';

const EMOJI = '🎉';
const chars = (s: string) => [...s].length;
/** A lone half of a surrogate pair, or the U+FFFD a store writes in its place. */
const SPLIT = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\ufffd/;
/** The `maxlength` of the first field named `name` (input or textarea). */
const maxlengthOf = (page: string, name: string) => Number(new RegExp(`<(?:input|textarea)[^>]*name="${name}"[^>]*maxlength="(\\d+)"`).exec(page)?.[1]);

describe('limits counted one way', () => {
  let d: Daemon;
  let admin: TestUser;
  let user: TestUser;
  let web: WebClient;
  let projectId: string;
  daemonForSuite(async (started) => {
    d = started;
    admin = await addUser(d);
    user = await addUser(d);
    web = await loggedIn(d, user);
    const project = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'Limits' } });
    projectId = project.body.id as string;
  });

  it(`keeps an uploaded name of ${MAX_FILENAME_CHARS} emoji whole, through the API and the web page, as a rename takes it`, async () => {
    const name = `${EMOJI.repeat(MAX_FILENAME_CHARS - 4)}.txt`;
    const viaApi = await uploadFiles(d, user.apiKey, [{ name, bytes: Buffer.from('api copy') }], { projectId });
    expect(viaApi.status, JSON.stringify(viaApi.body)).toBe(202);
    expect(viaApi.body.documents[0].filename).toBe(name);
    await web.get(`/projects/${projectId}`);
    const viaWeb = await uploadAs(web, projectId, [{ name, body: 'web copy' }]);
    expect(viaWeb.status, JSON.stringify(viaWeb.body)).toBe(202);
    expect(viaWeb.body.documents[0].filename).toBe(name);
    const id = viaApi.body.documents[0].id as string;
    const renamed = await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: user.apiKey, body: { filename: name } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    const over = await api(d, `/api/v1/documents/${id}`, { method: 'PATCH', token: user.apiKey, body: { filename: `${EMOJI}${name}` } });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain(`at most ${MAX_FILENAME_CHARS} characters`);
  });

  it('fits a longer uploaded name to what a rename takes, its extension kept and no emoji split', async () => {
    const name = `a${EMOJI.repeat(300)}.md`;
    const up = await uploadFiles(d, user.apiKey, [{ name, bytes: Buffer.from('# long name') }], { projectId });
    expect(up.status, JSON.stringify(up.body)).toBe(202);
    const kept = up.body.documents[0].filename as string;
    expect(kept).toBe(`a${EMOJI.repeat(MAX_FILENAME_CHARS - 4)}.md`);
    const again = await api(d, `/api/v1/documents/${up.body.documents[0].id}`, { method: 'PATCH', token: user.apiKey, body: { filename: kept } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it('hands on projects to a namesake, each renamed whole characters at a time, keeping whose it was', async () => {
    const leaving = await addUser(d);
    const heir = await addUser(d);
    const from = ` (from ${leaving.email})`;
    // The first's new name fits whole (its 100th UTF-16 unit falls inside an emoji); the second's is cut to fit.
    const names = [`x${EMOJI.repeat(60)}`, EMOJI.repeat(100)];
    const expected = [`${names[0]}${from}`, `${EMOJI.repeat(100 - chars(from))}${from}`];
    for (const name of names) {
      for (const owner of [leaving, heir]) {
        const made = await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name } });
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        if (owner === leaving) expect((await uploadFiles(d, owner.apiKey, [{ name: 'notes.txt', bytes: Buffer.from('kept') }], { projectId: made.body.id })).status).toBe(202);
      }
    }
    const deleted = await api(d, `/api/v1/admin/users/${encodeURIComponent(leaving.email)}?transfer_to=${encodeURIComponent(heir.email)}`, { method: 'DELETE', token: admin.apiKey });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const listed = (await api(d, '/api/v1/projects', { token: heir.apiKey })).body.projects as { id: string; name: string }[];
    const moved = listed.filter((p) => p.name.includes(leaving.email));
    expect(moved.map((p) => p.name).sort()).toEqual([...expected].sort());
    for (const p of moved) {
      expect(p.name).not.toMatch(SPLIT);
      const patched = await api(d, `/api/v1/projects/${p.id}`, { method: 'PATCH', token: heir.apiKey, body: { name: p.name } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    }
  });

  it(`takes e-mail addresses up to ${MAX_EMAIL_CHARS} characters in the uploaded-by filter, as every other field does, on the API and the CLI`, async () => {
    const address = (n: number) => `${'a'.repeat(n - '@example.com'.length)}@example.com`;
    expect((await api(d, `/api/v1/documents?uploaded_by=${address(MAX_EMAIL_CHARS)}`, { token: user.apiKey })).status).toBe(200);
    const over = await api(d, `/api/v1/documents?uploaded_by=${address(MAX_EMAIL_CHARS + 1)}`, { token: user.apiKey });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain(`at most ${MAX_EMAIL_CHARS} characters`);
    const cli = await runCli(['documents', 'list', '--by', address(MAX_EMAIL_CHARS + 1)], { env: cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }) });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain(`at most ${MAX_EMAIL_CHARS} characters`);
    const invite = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [address(MAX_EMAIL_CHARS + 1)], send: false } });
    expect(invite.status).toBe(400);
    expect(invite.body.error.message).toContain(`at most ${MAX_EMAIL_CHARS} characters`);
  });

  it(`takes in the invite form as many addresses of ${MAX_EMAIL_CHARS} characters as the API invites at once`, async () => {
    // A mailbox name is 64 bytes at most: the rest of the length is the domain's, in labels of at most 63.
    const domain = `${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(MAX_EMAIL_CHARS - 65 - 128 - 4)}.com`;
    const emails = Array.from({ length: MAX_INVITES }, (_, i) => `${String(i).padStart(3, '0')}${'i'.repeat(61)}@${domain}`);
    expect(emails[0]).toHaveLength(MAX_EMAIL_CHARS);
    const invited = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails, send: false } });
    expect(invited.status, JSON.stringify(invited.body).slice(0, 300)).toBe(201);
    const page = await (await loggedIn(d, admin)).get('/admin/users');
    expect(maxlengthOf(page.text, 'email')).toBeGreaterThanOrEqual(emails.join('\n').length);
  });

  it("finds a source's audit events by its URL, as long as a source's URL is, on the API and the Admin page", async () => {
    const url = `https://cloud.example.com/remote.php/dav/files/me/${'d'.repeat(MAX_SOURCE_URL_CHARS - 60)}/`;
    const added = await api(d, `/api/v1/projects/${projectId}/sources`, { token: user.apiKey, body: { url, kind: 'webdav', every: '1d' } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const found = await api(d, `/api/v1/audit-events?target=${encodeURIComponent(url)}`, { token: admin.apiKey });
    expect(found.status, JSON.stringify(found.body).slice(0, 300)).toBe(200);
    expect(found.body.events.length).toBeGreaterThan(0);
    const page = await (await loggedIn(d, admin)).get('/admin/audit');
    expect(maxlengthOf(page.text, 'target')).toBeGreaterThanOrEqual(url.length);
  });

  it('takes in the source form what the API takes: a user name and password of emoji to their limits, and every glob a source may have', async () => {
    const options = {
      username: EMOJI.repeat(MAX_SOURCE_USERNAME_CHARS),
      password: EMOJI.repeat(MAX_SOURCE_SECRET_CHARS),
      include: Array.from({ length: MAX_GLOBS }, (_, i) => `${String(i).padStart(3, '0')}${'g'.repeat(MAX_GLOB_CHARS - 4)}*`),
    };
    const viaApi = await api(d, `/api/v1/projects/${projectId}/sources`, { token: user.apiKey, body: { url: 'https://cloud.example.com/remote.php/dav/files/me/Documents/', kind: 'webdav', every: '1d', options } });
    expect(viaApi.status, JSON.stringify(viaApi.body)).toBe(201);
    const page = await web.get(`/projects/${projectId}/sources?kind=webdav`);
    const typed = { username: options.username, secret_password: options.password, include: options.include.join('\n') };
    for (const [field, value] of Object.entries(typed)) expect(maxlengthOf(page.text, field), field).toBeGreaterThanOrEqual(value.length);
    const edit = await web.get(`/projects/${projectId}/sources/${viaApi.body.id}/edit`);
    for (const [field, value] of Object.entries(typed)) expect(maxlengthOf(edit.text, field), `edit ${field}`).toBeGreaterThanOrEqual(value.length);
  });
});
