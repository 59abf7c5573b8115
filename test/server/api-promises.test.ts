/**
 * What docs/api.md promises that no other test holds, through the built daemon and real HTTP: `GET /me`'s fields;
 * the key list's order and a project-limited key's keys; the label list's order, its name limit and a label's
 * `document_count` without the trash; the saved-search list's order and the 400 of a shared search naming another
 * project (its `details` a list of `{path, message}`, as every field error's); sharing's owner-first member list and
 * its 201/200/409s and transfers; upload's `--max-files`, `paths` refusals and `?wait=true`'s 200 (settled) and 202 (its
 * `wait_timeout` ran out), its language settings from the project, the same bytes' metadata merge past 64 KiB; the
 * default page sizes (lists 50, search 10); the document list's `filename` (`%` and `_` plain), `sha256` and text
 * `limit` bounds; the list's filter parameters (a list past 100 values, a one-value filter sent twice); a source's
 * kind, schedule and `labels`; the admin routes' refusals, and the audit log's to a key limited to projects. Since
 * (second pass): `GET /me` for a write-only key; the lengths the page gives (names, descriptions, labels, a query,
 * a document's name, an e-mail address) counted in code points on every route that takes them, a group's name
 * refused as a field error, and a source's settings too; an upload's malformed language codes; facets' cap of 100
 * values; a member's uploads through an unsharing and their account's deletion (`uploaded_by` null).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { SourceClient } from '../helpers/sources.js';
import { sleep } from '../helpers/eventually.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { prose } from '../ingest/pipeline/fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const text = (name: string, body: string) => ({ name, bytes: Buffer.from(body) });

describe('docs/api.md, statement by statement', () => {
  let d: Daemon;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let project: string;
  const roots = mkdtempSync(join(tmpdir(), 'docsearch-api-promises-'));
  const as = (user: TestUser | string, path: string, opts: { method?: string; body?: unknown } = {}) =>
    api(d, path, { token: typeof user === 'string' ? user : user.apiKey, ...opts });
  const refused = (res: { status: number; body: any }, status: number, message: string | RegExp) => {
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    if (typeof message === 'string') expect(res.body.error.message).toBe(message);
    else expect(res.body.error.message).toMatch(message);
  };

  daemonForSuite(
    async (started) => {
      d = started;
      admin = await addUser(d); // the first account: the admin
      alice = await addUser(d);
      bob = await addUser(d);
      project = (await as(alice, '/api/v1/projects', { body: { name: 'Promises' } })).body.id;
    },
    { args: ['--max-files', '3', '--source-roots', roots] },
  );

  it('GET /me: the account, the credential kind, its scopes, admin and admin_from, a key’s project limit and expiry', async () => {
    const me = await as(admin, '/api/v1/me');
    expect(me.status).toBe(200);
    expect(Object.keys(me.body).sort()).toEqual(['admin', 'admin_from', 'email', 'expires_at', 'id', 'kind', 'project_ids', 'scopes']);
    expect(me.body).toMatchObject({ email: admin.email, kind: 'api_key', scopes: ['read:documents', 'write:documents'], admin: true, admin_from: null, project_ids: null, expires_at: null });
    const limited = await as(alice, '/api/v1/keys', { body: { name: 'limited', project_ids: [project], expires_in_days: 7 } });
    const mine = await as(limited.body.key, '/api/v1/me');
    expect(mine.body).toMatchObject({ email: alice.email, admin: false, project_ids: [project], expires_at: limited.body.expires_at });
    // No scope is needed: a write-only key asks too, and reads the OpenAPI document (any valid credential).
    const writer = (await as(alice, '/api/v1/keys', { body: { name: 'write only', scopes: ['write:documents'] } })).body.key as string;
    const written = await as(writer, '/api/v1/me');
    expect([written.status, written.body.scopes]).toEqual([200, ['write:documents']]);
    expect((await as(writer, '/api/v1/openapi.json')).status).toBe(200);
  });

  it('GET /keys lists newest first; a key limited to projects makes keys only within its limit, finds no unlimited key and makes no project', async () => {
    const first = await as(bob, '/api/v1/keys', { body: { name: 'first' } });
    await sleep(5); // ids order by the millisecond: two keys made in one are equally new
    const second = await as(bob, '/api/v1/keys', { body: { name: 'second' } });
    expect([first.status, second.status]).toEqual([201, 201]);
    const names = (await as(bob, '/api/v1/keys')).body.keys.map((k: { name: string }) => k.name);
    expect(names.slice(0, 2)).toEqual(['second', 'first']);

    const limited = (await as(alice, '/api/v1/keys', { body: { name: 'scripts', project_ids: [project] } })).body;
    const made = await as(limited.key, '/api/v1/keys', { body: { name: 'made by the limited key' } });
    expect(made.status).toBe(201);
    expect(made.body.project_ids).toEqual([project]);
    expect((await as(limited.key, '/api/v1/keys')).body.keys.every((k: { project_ids: string[] | null }) => k.project_ids !== null)).toBe(true);
    const outside = (await as(alice, '/api/v1/projects', { body: { name: 'Outside the limit' } })).body.id;
    refused(await as(limited.key, '/api/v1/keys', { body: { project_ids: [project, outside] } }), 404, `project "${outside}" not found`);
    // null is what the list shows for an unlimited key; a request leaves the field out for that.
    refused(await as(alice, '/api/v1/keys', { body: { project_ids: null } }), 400, 'body.project_ids: must be an array');
    refused(await as(alice, '/api/v1/keys', { body: { project_ids: Array.from({ length: 101 }, () => project) } }), 400, 'body.project_ids: must have at most 100 items');
    const unlimited = (await as(alice, '/api/v1/keys', { body: { name: 'unlimited' } })).body;
    refused(await as(limited.key, `/api/v1/keys/${unlimited.id}`, { method: 'DELETE' }), 404, 'API key not found');
    expect((await as(alice, `/api/v1/keys/${unlimited.id}`, { method: 'DELETE' })).status).toBe(204);
    const project2 = await as(limited.key, '/api/v1/projects', { body: { name: 'escape' } });
    expect(project2.status).toBe(403);
    expect(project2.body.error.code).toBe('forbidden');
  });

  it('labels: listed by name in any case, 1–64 characters; document_count leaves out documents in the trash', async () => {
    const path = `/api/v1/projects/${project}/labels`;
    for (const name of ['zeta', 'Beta', 'alpha']) expect((await as(alice, path, { body: { name } })).status).toBe(201);
    refused(await as(alice, path, { body: { name: 'x'.repeat(65) } }), 400, 'body.name: must be at most 64 characters');
    expect((await as(alice, path, { body: { name: 'x'.repeat(64) } })).status).toBe(201);
    expect((await as(alice, path)).body.labels.map((l: { name: string }) => l.name)).toEqual(['alpha', 'Beta', 'x'.repeat(64), 'zeta']);
    // A name taken in another case is refused quoting the label as the project spells it, adding or renaming.
    refused(await as(alice, path, { body: { name: 'BETA' } }), 409, 'the project has a label "Beta" already');
    const alpha = (await as(alice, path)).body.labels.find((l: { name: string }) => l.name === 'alpha');
    refused(await as(alice, `${path}/${alpha.id}`, { method: 'PATCH', body: { name: 'ZETA' } }), 409, 'the project has a label "zeta" already');

    const up = await uploadFiles(d, alice.apiKey, [text('kept.txt', 'The kept note on lighthouse lamps.'), text('binned.txt', 'The binned note on harbour cranes.')], {
      projectId: project,
      fields: { labels: 'zeta' },
    });
    expect(up.status).toBe(202);
    const count = async () => (await as(alice, path)).body.labels.find((l: { name: string }) => l.name === 'zeta').document_count;
    expect(await count()).toBe(2);
    expect((await as(alice, `/api/v1/documents/${up.body.documents[1].id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await count()).toBe(1);
  });

  it('saved searches: listed by name; one shared with a project may search only it: a 400 naming the field, details a list of {path, message}', async () => {
    for (const name of ['later', 'Earlier', 'alpha']) expect((await as(alice, '/api/v1/saved-searches', { body: { name, search: { query: 'lamps' } } })).status).toBe(201);
    expect((await as(alice, '/api/v1/saved-searches')).body.saved_searches.map((s: { name: string }) => s.name)).toEqual(['alpha', 'Earlier', 'later']);

    const other = (await as(alice, '/api/v1/projects', { body: { name: 'Elsewhere' } })).body.id;
    const message = 'body.search.project_ids: a search shared with a project may search only that project';
    const res = await as(alice, '/api/v1/saved-searches', { body: { name: 'leaky', project_id: project, search: { query: 'lamps', project_ids: [other] } } });
    refused(res, 400, message);
    expect(res.body.error.details).toEqual([{ path: 'body.search.project_ids', message }]);
  });

  it('sharing (owners): the owner of record first; 201 for a new member, 200 for a changed role; the owner of record as a member is a 409; other members 403', async () => {
    const members = `/api/v1/projects/${project}/members`;
    expect((await as(alice, members, { body: { email: bob.email, role: 'viewer' } })).status).toBe(201);
    const changed = await as(alice, members, { body: { email: bob.email, role: 'editor' } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ kind: 'user', email: bob.email, role: 'editor' });
    const list = (await as(alice, members)).body.members;
    expect(list.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [alice.email, 'owner'],
      [bob.email, 'editor'],
    ]);
    expect((await as(alice, members, { body: { email: alice.email, role: 'editor' } })).status).toBe(409);
    const aliceId = list[0].id as string;
    refused(await as(alice, `${members}/${aliceId}`, { method: 'DELETE' }), 409, /transfer/);
    // A member who is not an owner: 403 on every sharing route, reading the list too.
    expect((await as(bob, members)).status).toBe(403);
    expect((await as(bob, members, { body: { email: admin.email, role: 'viewer' } })).status).toBe(403);

    // A transfer: never to a disabled account; the new owner of record is listed first, the previous stays an owner.
    const handed = (await as(alice, '/api/v1/projects', { body: { name: 'Handed on' } })).body.id;
    const dave = await addUser(d);
    expect((await as(admin, `/api/v1/admin/users/${encodeURIComponent(dave.email)}/disable`, { method: 'POST' })).status).toBe(200);
    refused(await as(alice, `/api/v1/projects/${handed}/transfer`, { body: { email: dave.email } }), 409, /is disabled/);
    const moved = await as(alice, `/api/v1/projects/${handed}/transfer`, { body: { email: bob.email } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ owner: bob.email, role: 'owner' });
    expect((await as(alice, `/api/v1/projects/${handed}/members`)).body.members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [bob.email, 'owner'],
      [alice.email, 'owner'],
    ]);
  });

  it('upload: more files than --max-files, a paths count that does not match, a path given twice or not a relative path of 1–1024 characters are 400s; nothing is kept', async () => {
    const three = [text('p1.txt', 'first page of pelicans'), text('p2.txt', 'second page of pelicans'), text('p3.txt', 'third page of pelicans')];
    refused(await uploadFiles(d, bob.apiKey, [...three, text('p4.txt', 'fourth page of pelicans')]), 400, /at most 3 files/);
    refused(await uploadFiles(d, bob.apiKey, three.slice(0, 2), { fields: { paths: JSON.stringify(['a.txt']) } }), 400, 'paths: has 1 entries for 2 file(s); give one per file, in order');
    refused(await uploadFiles(d, bob.apiKey, three.slice(0, 2), { fields: { paths: JSON.stringify(['a.txt', 'a.txt']) } }), 400, 'paths: "a.txt" is given for more than one file');
    for (const [path, said] of [
      ['a'.repeat(1025), 'paths[0]: must be 1 to 1024 characters'],
      ['/etc/a.txt', 'paths[0]: must be a relative path like "guides/setup.md" (got "/etc/a.txt")'],
      ['notes/./a.txt', 'paths[0]: must be a relative path like "guides/setup.md" (got "notes/./a.txt")'],
      ['notes\\a.txt', 'paths[0]: must not contain backslashes (use / between folders)'],
    ]) {
      refused(await uploadFiles(d, bob.apiKey, three.slice(0, 1), { fields: { paths: JSON.stringify([path]) } }), 400, said!);
    }
    expect((await uploadFiles(d, bob.apiKey, three.slice(0, 1), { fields: { paths: JSON.stringify(['a'.repeat(1024)]) } })).status).toBe(202);
    // The refused requests kept none of their files (p1.txt came in with the 1024-character path).
    for (const name of ['p2.txt', 'p3.txt', 'p4.txt']) expect((await as(bob, `/api/v1/documents?filename=${name}`)).body.documents).toEqual([]);
    expect((await as(bob, '/api/v1/documents?filename=p1.txt')).body.documents.map((x: { path: string }) => x.path)).toEqual(['a'.repeat(1024)]);
  });

  it('upload ?wait=true: 200 once every document is ready or failed, 202 with them still processing when wait_timeout runs out', async () => {
    const settled = await uploadFiles(d, bob.apiKey, [text('quick.txt', 'A quick note on ferry timetables.')], { query: '?wait=true' });
    expect(settled.status).toBe(200);
    expect(settled.body.documents[0].status).toBe('ready');
    const long = await uploadFiles(d, bob.apiKey, [text('long.txt', prose('slow ferry', 3000))], { query: '?wait=true&wait_timeout=1' });
    expect(long.status).toBe(202);
    expect(['queued', 'processing']).toContain(long.body.documents[0].status);
    // Out of the way of the tests after this one.
    expect((await as(bob, `/api/v1/documents/${long.body.documents[0].id}`, { method: 'DELETE' })).status).toBe(204);
    refused(await uploadFiles(d, bob.apiKey, [text('never.txt', 'never')], { query: '?wait=true&wait_timeout=601' }), 400, 'query.wait_timeout: must be at most 600');
  });

  it('document list: filename takes % and _ as plain characters; sha256 takes 1–100 digests; the text of a document pages 1–500 chunks', async () => {
    const up = await uploadFiles(d, alice.apiKey, [text('100%.txt', 'percent sign'), text('a_b.txt', 'underscore sign'), text('axb.txt', 'any character')], {
      projectId: project,
      query: '?wait=true',
    });
    expect(up.status).toBe(200);
    const names = async (q: string) => (await as(alice, `/api/v1/documents?project_id=${project}&${q}`)).body.documents.map((x: { filename: string }) => x.filename);
    expect(await names('filename=%25')).toEqual(['100%.txt']);
    expect(await names('filename=A_B')).toEqual(['a_b.txt']);
    expect(await names(`sha256=${up.body.documents[2].sha256}`)).toEqual(['axb.txt']);
    const digests = Array.from({ length: 101 }, () => up.body.documents[2].sha256).join(',');
    refused(await as(alice, `/api/v1/documents?sha256=${digests}`), 400, 'query.sha256: must be one to 100 lowercase hex SHA-256 digests, comma-separated');
    const id = up.body.documents[0].id as string;
    refused(await as(alice, `/api/v1/documents/${id}/text?limit=501`), 400, 'query.limit: must be at most 500');
    refused(await as(alice, `/api/v1/documents/${id}/text?limit=0`), 400, 'query.limit: must be at least 1');
    expect((await as(alice, `/api/v1/documents/${id}/text?limit=500`)).body.pages[0].chunks[0].text).toContain('percent sign');
  });

  it('document list filters: a list of more than 100 values says so, whether comma-separated or repeated', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `l${i}`);
    refused(await as(alice, `/api/v1/documents?labels=${many.join(',')}`), 400, 'query.labels: must have at most 100 items');
    refused(await as(alice, `/api/v1/documents?${many.map((l) => `labels=${l}`).join('&')}`), 400, 'query.labels: must have at most 100 items');
    expect((await as(alice, `/api/v1/documents?${many.slice(0, 100).map((l) => `labels=${l}`).join('&')}`)).status).toBe(200);
  });

  it('document list filters: a one-value filter sent twice is a 400, never one of the two taken', async () => {
    refused(await as(alice, '/api/v1/documents?uploaded_since=2025-01-01&uploaded_since=2026-01-01'), 400, 'query.uploaded_since: is given 2 times; send it once');
    refused(await as(alice, '/api/v1/documents?path_prefix=a/&path_prefix=b/'), 400, 'query.path_prefix: is given 2 times; send it once');
  });

  it('a source puts its labels on every document it brings; PATCH labels adds and takes them off those, leaving labels set by hand', async () => {
    const dir = join(roots, 'handbook');
    mkdirSync(dir);
    writeFileSync(join(dir, 'boats.txt'), 'The handbook page on rowing boats and oars.');
    writeFileSync(join(dir, 'ropes.txt'), 'The handbook page on knots and mooring ropes.');
    const sources = new SourceClient(d, alice.apiKey);
    const synced = await sources.project('Synced');
    const source = await sources.add(synced, { url: pathToFileURL(dir).href, labels: ['handbook', 'ops'] });
    // The kind from a file: URL, every hour unless told.
    expect(source).toMatchObject({ kind: 'folder', every: '1h', labels: ['handbook', 'ops'], held_deletions: null, secrets: [], secrets_to_reenter: [] });
    const docs = [...(await sources.settled(synced, source.id, 2)).values()].sort((a, b) => a.filename.localeCompare(b.filename));
    const labels = async (id: string) => ((await as(alice, `/api/v1/documents/${id}`)).body.labels as string[]).sort();
    expect([await labels(docs[0]!.id), await labels(docs[1]!.id)]).toEqual([
      ['handbook', 'ops'],
      ['handbook', 'ops'],
    ]);
    expect((await as(alice, `/api/v1/documents/${docs[0]!.id}`, { method: 'PATCH', body: { labels: { add: ['mine'] } } })).status).toBe(200);
    const patched = await as(alice, `/api/v1/projects/${synced}/sources/${source.id}`, { method: 'PATCH', body: { labels: ['handbook', 'reviewed'] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.labels).toEqual(['handbook', 'reviewed']);
    expect([await labels(docs[0]!.id), await labels(docs[1]!.id)]).toEqual([
      ['handbook', 'mine', 'reviewed'],
      ['handbook', 'reviewed'],
    ]);

    // A setting its kind refuses is a field error as any other: named under `body`, with its details, adding or changing.
    const sourcesPath = `/api/v1/projects/${synced}/sources`;
    for (const [path, method, body, field, message] of [
      [sourcesPath, 'POST', { url: 'ftp://files.example/handbook' }, 'body.url', 'ftp: URLs name no kind of source; give kind (folder, webdav, s3, git, web, imap)'],
      [sourcesPath, 'POST', { url: pathToFileURL(dir).href, every: '5s' }, 'body.every', 'at least 1m on this server'],
      [sourcesPath, 'POST', { url: pathToFileURL(dir).href, options: { colour: 'red' } }, 'body.options', /./],
      [`${sourcesPath}/${source.id}`, 'PATCH', { every: 'weekly' }, 'body.every', 'a duration such as "15m", "1h" or "1d"'],
    ] as const) {
      const res = await as(alice, path, { method, body });
      expect([res.status, res.body.error?.message], JSON.stringify(body)).toEqual([400, typeof message === 'string' ? `${field}: ${message}` : expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}[.:]`))]);
      expect(res.body.error.details).toEqual([{ path: expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}`)), message: res.body.error.message }]);
    }
  });

  it('lists page 50 by default (projects in creation order, documents oldest first); a search answers 10 passages by default', async () => {
    const carol = await addUser(d);
    const made: string[] = [];
    for (let i = 0; i < 51; i++) made.push((await as(carol, '/api/v1/projects', { body: { name: `p${String(i).padStart(2, '0')}` } })).body.id);
    const page = (await as(carol, '/api/v1/projects')).body;
    expect(page.projects.map((p: { name: string }) => p.name)).toEqual(['default', ...Array.from({ length: 49 }, (_, i) => `p${String(i).padStart(2, '0')}`)]);
    expect(page.next_cursor).not.toBeNull();

    const long = await uploadFiles(d, carol.apiKey, [text('lighthouse.txt', prose('lighthouse', 200))], { projectId: made[50], query: '?wait=true' });
    expect(long.body.documents[0].chunk_count).toBeGreaterThan(10);
    const found = await as(carol, '/api/v1/search', { body: { query: 'lighthouse', mode: 'keyword', project_ids: [made[50]] } });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.results).toHaveLength(10);
    expect(found.body.next_cursor).not.toBeNull();

    // 26 requests, 51 documents: the first page ends with the 25th request. The files of one request are uploaded in
    // the same millisecond, in no set order among themselves.
    for (let i = 0; i < 26; i++) {
      const files = (i < 25 ? [0, 1] : [0]).map((j) => text(`r${String(i).padStart(2, '0')}-${j}.txt`, `Note ${i}-${j} on the lantern room.`));
      expect((await uploadFiles(d, carol.apiKey, files, { projectId: made[0] })).status).toBe(202);
    }
    const docs = (await as(carol, `/api/v1/documents?project_id=${made[0]}`)).body;
    expect(docs.documents.map((x: { filename: string }) => x.filename.slice(0, 3))).toEqual(Array.from({ length: 50 }, (_, i) => `r${String(Math.floor(i / 2)).padStart(2, '0')}`));
    expect(docs.next_cursor).not.toBeNull();
  });

  it("an upload's unset language and ocr_languages are its project's settings from now on; null clears them for later uploads", async () => {
    const p = (await as(alice, '/api/v1/projects', { body: { name: 'Dutch notes' } })).body.id;
    const set = await as(alice, `/api/v1/projects/${p}`, { method: 'PATCH', body: { language: 'nl', ocr_languages: 'deu' } });
    expect(set.body).toMatchObject({ language: 'nl', ocr_languages: 'deu' });
    const settings = (doc: { language_setting: string | null; ocr_languages: string | null }) => [doc.language_setting, doc.ocr_languages];
    const first = await uploadFiles(d, alice.apiKey, [text('een.txt', 'De vuilnisbakken worden op dinsdag geleegd.')], { projectId: p });
    const own = await uploadFiles(d, alice.apiKey, [text('twee.txt', 'Les poubelles sont vidées le mardi.')], { projectId: p, fields: { language: 'FR' } });
    expect([settings(first.body.documents[0]), settings(own.body.documents[0])]).toEqual([
      ['nl', 'deu'],
      ['fr', 'deu'],
    ]);
    expect((await as(alice, `/api/v1/projects/${p}`, { method: 'PATCH', body: { language: null, ocr_languages: null } })).body).toMatchObject({ language: null, ocr_languages: null });
    const later = await uploadFiles(d, alice.apiKey, [text('drie.txt', 'De glasbak wordt op vrijdag geleegd.')], { projectId: p });
    expect(settings(later.body.documents[0])).toEqual([null, null]);
    expect(settings((await as(alice, `/api/v1/documents/${first.body.documents[0].id}`)).body)).toEqual(['nl', 'deu']);
    // A malformed code is a 400 naming the field: an upload's multipart field by its name alone, as `paths` and `metadata`.
    const bad = (fields: Record<string, string>) => uploadFiles(d, alice.apiKey, [text('vier.txt', 'De papierbak wordt op maandag geleegd.')], { projectId: p, fields });
    refused(await bad({ language: 'xx1' }), 400, 'language: "xx1" is not an ISO 639-1 language code (such as de, zh)');
    refused(await bad({ ocr_languages: 'deu eng' }), 400, 'ocr_languages: "deu eng" is not Tesseract language codes joined by "+" (such as deu, deu+eng, chi_sim)');
    refused(await as(alice, `/api/v1/projects/${p}`, { method: 'PATCH', body: { language: 'xx1' } }), 400, 'body.language: must be an ISO 639-1 language code (such as de, zh)');
    expect((await as(alice, `/api/v1/documents?project_id=${p}&filename=vier`)).body.documents).toEqual([]);
  });

  it('the same bytes again: the upload’s metadata merged over the document’s, unless the whole would pass 64 KiB: then it keeps its own, as the answer shows', async () => {
    const bytes = 'The tide tables for the outer harbour, spring and neap.';
    const first = await uploadFiles(d, alice.apiKey, [text('tides.txt', bytes)], { projectId: project, metadata: JSON.stringify({ one: 'x'.repeat(40 * 1024) }), query: '?wait=true' });
    expect(first.status).toBe(200);
    const again = await uploadFiles(d, alice.apiKey, [text('tides.txt', bytes)], { projectId: project, metadata: JSON.stringify({ two: 'y'.repeat(40 * 1024) }) });
    expect(again.status).toBe(202);
    expect(again.body.documents[0]).toMatchObject({ id: first.body.documents[0].id, duplicate: true });
    expect(Object.keys(again.body.documents[0].metadata)).toEqual(['one']);
    const small = await uploadFiles(d, alice.apiKey, [text('tides.txt', bytes)], { projectId: project, metadata: JSON.stringify({ two: 'y' }) });
    expect(Object.keys(small.body.documents[0].metadata).sort()).toEqual(['one', 'two']);
  });

  it('admin routes: 403 to anyone else; an admin cannot disable themself; invitations answer 207 naming each refused address; a mail test needs --smtp-url', async () => {
    const forbidden = await as(alice, '/api/v1/admin/users');
    expect([forbidden.status, forbidden.body.error.code]).toEqual([403, 'forbidden']);
    refused(await as(admin, `/api/v1/admin/users/${encodeURIComponent(admin.email)}/disable`, { method: 'POST' }), 400, /your own account/);
    const invited = await as(admin, '/api/v1/admin/invitations', { body: { emails: ['newcomer@example.com', bob.email, 'not-an-address'], send: false } });
    expect(invited.status).toBe(207);
    expect(invited.body.invitations.map((i: { email: string; mailed: boolean; link: string }) => [i.email, i.mailed, typeof i.link])).toEqual([['newcomer@example.com', false, 'string']]);
    expect(invited.body.refused.map((r: { email: string }) => r.email)).toEqual([bob.email, 'not-an-address']);
    expect(invited.body.refused.every((r: { error: string }) => r.error.length > 0)).toBe(true);
    const all = await as(admin, '/api/v1/admin/invitations', { body: { emails: ['second@example.com'], send: false } });
    expect([all.status, all.body.refused]).toEqual([201, []]);
    refused(await as(admin, '/api/v1/admin/mail/test', { body: {} }), 409, /--smtp-url/);
  });

  it('lengths at the numbers the page gives, in characters as Unicode counts them, on every route that takes the field', async () => {
    const E = '\u{1F389}'; // one character, two UTF-16 units: a count of units would refuse half the length
    const over = (res: { status: number; body: any }, field: string, n: number, what = `${field}: must be at most ${n} characters`) => refused(res, 400, what);
    const kept = (res: { status: number; body: any }) => expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    // Names: 1–100, whitespace alone is none.
    const name = E.repeat(100);
    const made = await as(alice, '/api/v1/projects', { body: { name, description: E.repeat(2000) } });
    kept(made);
    over(await as(alice, '/api/v1/projects', { body: { name: name + E } }), 'body.name', 100);
    over(await as(alice, '/api/v1/projects', { body: { name: 'long description', description: E.repeat(2001) } }), 'body.description', 2000);
    over(await as(alice, `/api/v1/projects/${made.body.id}`, { method: 'PATCH', body: { name: name + E } }), 'body.name', 100);
    over(await as(alice, `/api/v1/projects/${made.body.id}`, { method: 'PATCH', body: { description: E.repeat(2001) } }), 'body.description', 2000);
    kept(await as(admin, '/api/v1/admin/groups', { body: { name, description: E.repeat(2000) } }));
    over(await as(admin, '/api/v1/admin/groups', { body: { name: name + E, description: '' } }), 'body.name', 100);
    over(await as(admin, '/api/v1/admin/groups', { body: { name: 'long description', description: E.repeat(2001) } }), 'body.description', 2000);
    kept(await as(alice, '/api/v1/keys', { body: { name } }));
    over(await as(alice, '/api/v1/keys', { body: { name: name + E } }), 'body.name', 100);
    const saved = await as(alice, '/api/v1/saved-searches', { body: { name, search: { query: 'lamps' } } });
    kept(saved);
    over(await as(alice, '/api/v1/saved-searches', { body: { name: name + E, search: { query: 'lamps' } } }), 'body.name', 100);
    over(await as(alice, `/api/v1/saved-searches/${saved.body.id}`, { method: 'PATCH', body: { name: name + E } }), 'body.name', 100);
    for (const [user, path, body] of [
      [alice, '/api/v1/projects', { name: '   ' }],
      [admin, '/api/v1/admin/groups', { name: '   ', description: '' }],
      [alice, '/api/v1/keys', { name: '   ' }],
      [alice, '/api/v1/saved-searches', { name: '   ', search: { query: 'lamps' } }],
    ] as const) {
      const res = await as(user, path, { body });
      expect([res.status, res.body.error?.message], path).toEqual([400, expect.stringMatching(/^body\.name: /)]);
    }
    // A group's own rule (no ":" or "/") is a field error too, with its details.
    for (const name of ['ops:west', 'ops/west']) {
      const res = await as(admin, '/api/v1/admin/groups', { body: { name, description: '' } });
      const message = 'body.name: a group name is 1–100 characters, without ":" or "/", and does not start with a space';
      refused(res, 400, message);
      expect(res.body.error.details).toEqual([{ path: 'body.name', message }]);
    }
    // Label names 1–64, renamed too.
    const labels = `/api/v1/projects/${made.body.id}/labels`;
    const label = await as(alice, labels, { body: { name: E.repeat(64) } });
    kept(label);
    over(await as(alice, labels, { body: { name: E.repeat(65) } }), 'body.name', 64);
    over(await as(alice, `${labels}/${label.body.id}`, { method: 'PATCH', body: { name: E.repeat(65) } }), 'body.name', 64);
    // A query: 1–2,000 after trimming.
    const query = (q: string) => as(alice, '/api/v1/search', { body: { query: q, mode: 'keyword', project_ids: [made.body.id] } });
    kept(await query(`  ${E.repeat(2000)}  `));
    over(await query(E.repeat(2001)), 'body.query', 2000);
    // A document's name: a rename of 255 is kept, of 256 refused; an upload's longer name is cut to 255, its extension kept.
    const up = await uploadFiles(d, alice.apiKey, [text(`${E.repeat(300)}.txt`, 'A note with a very long name about buoys.')], { projectId: made.body.id });
    expect(up.status, JSON.stringify(up.body)).toBe(202);
    expect(up.body.documents[0].filename).toBe(`${E.repeat(251)}.txt`);
    const doc = `/api/v1/documents/${up.body.documents[0].id}`;
    expect((await as(alice, doc, { method: 'PATCH', body: { filename: `${E.repeat(252)}.md` } })).body.filename).toBe(`${E.repeat(252)}.md`);
    over(await as(alice, doc, { method: 'PATCH', body: { filename: `${E.repeat(253)}.md` } }), 'body.filename', 255);
    // An e-mail address: at most 254, in every field and filter that takes one.
    const address = (n: number) => `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(n - 197)}.org`;
    expect([address(254).length, address(255).length]).toEqual([254, 255]);
    const long = address(255);
    kept(await as(admin, '/api/v1/admin/invitations', { body: { emails: [address(254)], send: false } }));
    kept(await as(alice, `/api/v1/documents?uploaded_by=${address(254)}`));
    kept(await as(admin, `/api/v1/audit-events?actor=${address(254)}`));
    for (const [user, path, body, field] of [
      [admin, '/api/v1/admin/invitations', { emails: [long], send: false }, 'body.emails.0'],
      [alice, `/api/v1/projects/${made.body.id}/members`, { email: long, role: 'viewer' }, 'body.email'],
      [alice, `/api/v1/projects/${made.body.id}/transfer`, { email: long }, 'body.email'],
      [alice, `/api/v1/documents?uploaded_by=${long}`, undefined, 'query.uploaded_by'],
      [alice, '/api/v1/search', { query: 'lamps', filters: { uploaded_by: [address(254), long] } }, 'body.filters.uploaded_by'],
      [admin, `/api/v1/audit-events?actor=${long}`, undefined, 'query.actor'],
      [admin, '/api/v1/admin/mail/test', { to: long }, 'body.to'],
    ] as const) {
      const res = await as(user, path, body ? { body } : {});
      expect([res.status, res.body.error?.message], path).toEqual([400, expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}.*at most 254 characters`))]);
    }
  });

  it("a member's uploads stay when the project is unshared with them; once their account is deleted, they count under uploaded_by null", async () => {
    const erin = await addUser(d);
    const shared = (await as(alice, '/api/v1/projects', { body: { name: 'Left behind' } })).body.id as string;
    expect((await as(alice, `/api/v1/projects/${shared}/members`, { body: { email: erin.email, role: 'editor' } })).status).toBe(201);
    for (const [user, name] of [[alice, 'alices.txt'], [erin, 'erins.txt']] as const) {
      const up = await uploadFiles(d, user.apiKey, [text(name, `The ${name} note on tidal locks.`)], { projectId: shared, query: '?wait=true' });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
    }
    const counts = async () => {
      const res = await as(alice, `/api/v1/documents?project_id=${shared}&facets=uploaded_by`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return Object.fromEntries((res.body.facets.uploaded_by as { value: string | null; count: number }[]).map((v) => [String(v.value), v.count]));
    };
    expect(await counts()).toEqual({ [alice.email]: 1, [erin.email]: 1 });
    // Unshared: what she uploaded stays, hers still.
    const member = ((await as(alice, `/api/v1/projects/${shared}/members`)).body.members as { id: string; email?: string }[]).find((m) => m.email === erin.email)!;
    expect((await as(alice, `/api/v1/projects/${shared}/members/${member.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await counts()).toEqual({ [alice.email]: 1, [erin.email]: 1 });
    const gone = await as(admin, `/api/v1/admin/users/${encodeURIComponent(erin.email)}`, { method: 'DELETE' });
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    expect(await counts()).toEqual({ [alice.email]: 1, null: 1 });
  });

  it('facets: at most 100 values, most frequent first, ties in name order; the list and search alike', async () => {
    const tags = Array.from({ length: 120 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    const p = (await as(alice, '/api/v1/projects', { body: { name: 'Many tags' } })).body.id as string;
    const up = await uploadFiles(d, alice.apiKey, [text('tagged.txt', 'The quayside crane inspection log.'), text('twice.txt', 'The quayside bollard inspection log.')], {
      projectId: p,
      query: '?wait=true',
      metadata: JSON.stringify({ tags }),
    });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    // One more document with the last tag: it counts 2, the most frequent, and comes first though it sorts last.
    expect((await as(alice, `/api/v1/documents/${up.body.documents[1].id}`, { method: 'PATCH', body: { metadata: { tags: ['t119'] } } })).status).toBe(200);
    const expected = [{ value: 't119', count: 2 }, ...tags.slice(0, 99).map((value) => ({ value, count: 1 }))];
    const listed = await as(alice, `/api/v1/documents?project_id=${p}&facets=metadata.tags`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const searched = await as(alice, '/api/v1/search', { body: { query: 'quayside inspection', mode: 'keyword', group: 'document', project_ids: [p], facets: ['metadata.tags'] } });
    expect(searched.status, JSON.stringify(searched.body)).toBe(200);
    expect([listed.body.facets['metadata.tags'], searched.body.facets['metadata.tags']]).toEqual([expected, expected]);
  });

  it("the audit log is refused to a key limited to projects, an admin's too: such a key sees nothing else", async () => {
    const own = (await as(admin, '/api/v1/projects', { body: { name: 'Admin scripts' } })).body.id;
    const limited = (await as(admin, '/api/v1/keys', { body: { name: 'one project', project_ids: [own] } })).body.key as string;
    expect((await as(admin, '/api/v1/audit-events?limit=1')).status).toBe(200);
    for (const path of ['/api/v1/audit-events', '/api/v1/audit-events?format=jsonl', '/api/v1/admin/users']) {
      const res = await as(limited, path);
      expect([res.status, res.body.error?.code], path).toEqual([403, 'forbidden']);
    }
  });
});
