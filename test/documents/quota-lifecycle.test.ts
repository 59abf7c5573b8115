/**
 * Quotas across a document's lifecycle (docs/operations.md#quotas), through the built daemon's REST API on both
 * engines: bytes a project already holds upload again as the duplicate and add nothing; a restore from the trash, a
 * move into a project, a source's new version of a file and an e-mail's attachments are held to the quotas as uploads
 * are, and a move or a transfer leaves the uploader's usage theirs; a restore whose attachment's path another
 * document took is refused, as one whose own path was taken; a move onto bytes the target holds only in a replaced
 * version is no 500. Then a generated sequence of uploads, new
 * versions, duplicates, deletes, restores, purges, moves and quota changes, after each of which the usage that
 * `GET /admin/users` and `PATCH /admin/projects` show equals a recount of the live documents listed, and no operation
 * that added bytes left a quota passed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { unmet } from '../helpers/requirement.js';
import { SourceClient } from '../helpers/sources.js';
import { newPostgresDatabase } from '../helpers/store-dialects.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { harbourMail } from '../helpers/harbour-mail.js';

const ENGINES = [
  { engine: 'sqlite', skip: null },
  { engine: 'postgresql', skip: unmet(postgresUnavailable()) },
] as const;

/** Text of exactly `size` bytes whose words no other call's share. */
let made = 0;
const text = (size: number, tag = `note ${++made}`) => Buffer.from(`${`${tag}: the harbour, the orchard and the lighthouse. `.repeat(Math.ceil(size / 40))}`.slice(0, size));

/** A seeded generator of numbers in [0, 1) (mulberry32): the same sequence of operations every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An e-mail whose one attachment is `attachment` as note.txt (base64). */
const mailWith = (subject: string, attachment: Buffer) =>
  Buffer.from(
    harbourMail(subject, `The tide tables for ${subject}.`, [
      '--b',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Disposition: attachment; filename="note.txt"',
      'Content-Transfer-Encoding: base64',
      '',
      ...(attachment.toString('base64').match(/.{1,76}/g) ?? []),
    ]),
  );

describe.each(ENGINES)('quotas across the lifecycle ($engine)', ({ engine, skip }) => {
  if (skip) {
    it.skip(`needs PostgreSQL: ${skip}`, () => undefined);
    return;
  }
  const dirs = tempDirs('docsearch-quota-lifecycle');
  let root: string;
  let d: Daemon;
  let admin: TestUser;

  beforeAll(async () => {
    root = dirs.make('root');
    d = await startDaemon({ databaseUrl: engine === 'postgresql' ? await newPostgresDatabase() : undefined, args: ['--source-roots', root, '--sources-min-interval', '1'] });
    admin = await addUser(d, { email: `admin-${engine}@example.com` });
  });
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    dirs.removeAll();
  });

  const as = (u: TestUser) => ({
    get: (path: string) => api(d, `/api/v1${path}`, { token: u.apiKey }),
    send: (method: string, path: string, body?: unknown) => api(d, `/api/v1${path}`, { token: u.apiKey, method, ...(body === undefined ? {} : { body }) }),
  });
  const setUserQuota = async (u: TestUser, bytes: number | null) => expect((await as(admin).send('PATCH', `/admin/users/${u.email}`, { quota_bytes: bytes })).status).toBe(200);
  const setProjectQuota = async (project: string, bytes: number | null) => {
    const res = await as(admin).send('PATCH', `/admin/projects/${project}`, { quota_bytes: bytes });
    expect(res.status).toBe(200);
    return res.body.usage.bytes as number;
  };
  const userBytes = async (u: TestUser) => (await as(admin).get(`/admin/users/${u.email}`)).body.usage.bytes as number;
  const project = async (owner: TestUser, name: string) => {
    const res = await as(owner).send('POST', '/projects', { name });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const upload = (u: TestUser, projectId: string, files: { name: string; bytes: Buffer }[], paths?: string[]) =>
    uploadFiles(d, u.apiKey, files, { projectId, query: '?wait=true&wait_timeout=120', ...(paths ? { fields: { paths: JSON.stringify(paths) } } : {}) });
  const account = async (tag: string) => addUser(d, { email: `${tag}-${engine}-${++made}@example.com` });

  it('bytes the project holds upload again as the duplicate at its quota, adding nothing; new bytes past it are refused', async () => {
    const alice = await account('dedupe');
    const inbox = await project(alice, 'inbox');
    await setUserQuota(alice, 1000);
    const bytes = text(800);
    expect((await upload(alice, inbox, [{ name: 'a.txt', bytes }])).status).toBe(200);
    const again = await upload(alice, inbox, [{ name: 'a-again.txt', bytes }]);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.documents[0].duplicate).toBe(true);
    // Twice in one upload, with new bytes that fit: the repeat adds nothing either.
    const twice = await upload(alice, inbox, [{ name: 'a.txt', bytes }, { name: 'b.txt', bytes: text(150) }]);
    expect(twice.status, JSON.stringify(twice.body)).toBe(200);
    const past = await upload(alice, inbox, [{ name: 'c.txt', bytes: text(100) }]);
    expect(past.status).toBe(507);
    expect(past.body.error.details.quota).toEqual({ scope: 'user', limit_bytes: 1000, used_bytes: 950, upload_bytes: 100 });
    expect(await userBytes(alice)).toBe(950);
  });

  it('a restore that would pass a quota is refused and stays in the trash; once there is room it comes back', async () => {
    const alice = await account('restore');
    const inbox = await project(alice, 'inbox');
    await setUserQuota(alice, 1000);
    const first = (await upload(alice, inbox, [{ name: 'first.txt', bytes: text(600) }])).body.documents[0];
    expect((await as(alice).send('DELETE', `/documents/${first.id}`)).status).toBe(204);
    const second = (await upload(alice, inbox, [{ name: 'second.txt', bytes: text(600) }])).body.documents[0];
    expect(second.status).toBe('ready');

    const refused = await as(alice).send('POST', `/trash/${first.id}/restore`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(507);
    expect(refused.body.error.code).toBe('quota_exceeded');
    expect(refused.body.error.message).toMatch(/^over the quota of restore-.* \(1000 B: 600 B used, what the restore brings back 600 B\), so it stays in the trash/);
    expect((await as(alice).get(`/trash?project_id=${inbox}`)).body.documents.map((x: { id: string }) => x.id)).toEqual([first.id]);
    expect(await userBytes(alice)).toBe(600);

    expect((await as(alice).send('DELETE', `/documents/${second.id}`)).status).toBe(204);
    expect((await as(alice).send('POST', `/trash/${first.id}/restore`)).status).toBe(200);
    expect(await userBytes(alice)).toBe(600);
  });

  it("a move into a project past its quota is refused; a move counts for the project, the uploader's usage stays theirs, through a transfer too", async () => {
    const owner = await account('owner');
    const mover = await account('mover');
    const uploader = await account('uploader');
    const [capped, open] = [await project(owner, 'capped'), await project(owner, 'open')];
    for (const p of [capped, open]) for (const u of [mover, uploader]) expect((await as(owner).send('POST', `/projects/${p}/members`, { email: u.email, role: 'editor' })).status).toBe(201);
    expect(await setProjectQuota(capped, 1000)).toBe(0);
    expect((await upload(owner, capped, [{ name: 'there.txt', bytes: text(600) }])).status).toBe(200);
    const doc = (await upload(uploader, open, [{ name: 'moving.txt', bytes: text(500) }])).body.documents[0];

    const refused = await as(mover).send('PATCH', `/documents/${doc.id}`, { project_id: capped });
    expect(refused.status, JSON.stringify(refused.body)).toBe(507);
    expect(refused.body.error.details.quota).toEqual({ scope: 'project', limit_bytes: 1000, used_bytes: 600, upload_bytes: 500 });
    expect(refused.body.error.message).toMatch(/the moved document 500 B\), so it stays where it was/);
    expect((await as(mover).get(`/documents/${doc.id}`)).body.project_id).toBe(open);

    expect(await setProjectQuota(capped, 2000)).toBe(600);
    expect((await as(mover).send('PATCH', `/documents/${doc.id}`, { project_id: capped })).status).toBe(200);
    expect(await setProjectQuota(capped, 2000)).toBe(1100);
    expect(await setProjectQuota(open, null)).toBe(0);
    // The uploader's account still counts it (what it uploaded, wherever it went); the mover's never did.
    expect(await userBytes(uploader)).toBe(500);
    expect(await userBytes(mover)).toBe(0);
    // Nor does a transfer of the project change whose uploads its documents are.
    expect((await as(owner).send('POST', `/projects/${capped}/transfer`, { email: mover.email })).status).toBe(200);
    expect([await userBytes(owner), await userBytes(mover), await userBytes(uploader), await setProjectQuota(capped, 2000)]).toEqual([600, 0, 500, 1100]);
  });

  it('a move into a project that holds its bytes only in a version replaced there (hidden, not yet removed) takes the place of that version', async () => {
    // Found by the generated sequence below: the move passed its checks and then failed on the unique index (500).
    const alice = await account('replaced');
    const [here, there] = [await project(alice, 'here'), await project(alice, 'there')];
    const bytes = text(300);
    expect((await upload(alice, there, [{ name: 'v1.txt', bytes }], ['v.txt'])).status).toBe(200);
    const v2 = await upload(alice, there, [{ name: 'v2.txt', bytes: text(400) }], ['v.txt']);
    expect(v2.status).toBe(200);
    const copy = (await upload(alice, here, [{ name: 'copy.txt', bytes }])).body.documents[0];
    const moved = await as(alice).send('PATCH', `/documents/${copy.id}`, { project_id: there });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const listed = (await as(alice).get(`/documents?project_id=${there}`)).body.documents.map((x: { id: string }) => x.id).sort();
    expect(listed).toEqual([copy.id, v2.body.documents[0].id].sort());
    expect(await setProjectQuota(there, null)).toBe(700);
  });

  it("a source's new version of a file that would pass a quota pauses the source; the document keeps its old version", async () => {
    const alice = await account('source');
    const client = new SourceClient(d, alice.apiKey);
    const inbox = await client.project('inbox');
    await setUserQuota(alice, 1000);
    const dir = join(root, `source-${++made}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.txt'), text(500, 'first version'));
    const source = await client.add(inbox, { url: `file://${dir}` });
    const [first] = [...(await client.settled(inbox, source.id, 1)).values()];
    expect(await userBytes(alice)).toBe(500);

    writeFileSync(join(dir, 'a.txt'), text(1500, 'second version'));
    const paused = await client.sync(inbox, source.id);
    expect(paused.status).toBe('paused');
    expect(paused.paused_reason).toMatch(/^over the quota of source-.* \(1000 B: 500 B used, the new version adds 1000 B\), so the document keeps its old version/);
    expect((await as(alice).get(`/documents/${first!.id}`)).body).toMatchObject({ size_bytes: 500, sha256: first!.sha256 });
    expect(await userBytes(alice)).toBe(500);

    // Raised, the owner's confirmed pass takes the new version.
    await setUserQuota(alice, 2000);
    expect((await client.sync(inbox, source.id, { confirm: true })).status).toBe('active');
    expect((await client.settled(inbox, source.id, 1)).get('a.txt')).toMatchObject({ id: first!.id, size_bytes: 1500 });
    expect(await userBytes(alice)).toBe(1500);
  });

  it("an e-mail's attachment that would pass a quota is not kept, and the message says so; the quota holds", async () => {
    const alice = await account('mail');
    const inbox = await project(alice, 'inbox');
    const mail = mailWith('March', text(3000));
    await setUserQuota(alice, mail.length + 1000);
    const up = await upload(alice, inbox, [{ name: 'march.eml', bytes: mail }]);
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.documents[0].warnings.join(' ')).toMatch(/the attachment note\.txt was not kept: over the quota of mail-/);
    const docs = (await as(alice).get(`/documents?project_id=${inbox}`)).body.documents;
    expect(docs.map((x: { filename: string }) => x.filename)).toEqual(['march.eml']);
    expect(await userBytes(alice)).toBe(mail.length);
  });

  it("a restore whose attachment's path another document took meanwhile is refused (409), as one whose own path was", async () => {
    const alice = await account('paths');
    const inbox = await project(alice, 'inbox');
    const up = await upload(alice, inbox, [{ name: 'm.eml', bytes: mailWith('April', text(500)) }], ['mail/m.eml']);
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const message = up.body.documents[0];
    const attachment = await waitFor(async () => {
      const at = (await as(alice).get(`/documents?project_id=${inbox}&path=${encodeURIComponent('mail/m.eml/note.txt')}`)).body.documents;
      return at.length === 1 && at[0].status === 'ready' && at[0];
    }, 120_000, 'the attachment ready at its path');
    expect(attachment.attached_to).toBe(message.id);
    expect((await as(alice).send('DELETE', `/documents/${message.id}`)).status).toBe(204);
    const other = await upload(alice, inbox, [{ name: 'note.txt', bytes: text(200) }], ['mail/m.eml/note.txt']);
    expect(other.status).toBe(200);

    const refused = await as(alice).send('POST', `/trash/${message.id}/restore`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', message: 'another document is at the path of its attachment "note.txt" now ("note.txt"): delete or move that one first' });
    const atPath = (await as(alice).get(`/documents?project_id=${inbox}&path=${encodeURIComponent('mail/m.eml/note.txt')}`)).body.documents;
    expect(atPath.map((x: { id: string }) => x.id)).toEqual([other.body.documents[0].id]);
    expect((await as(alice).get(`/trash?project_id=${inbox}`)).body.documents.map((x: { id: string }) => x.id)).toEqual([message.id]);

    // The path free again, it comes back with its attachment.
    expect((await as(alice).send('DELETE', `/documents/${other.body.documents[0].id}`)).status).toBe(204);
    expect((await as(alice).send('POST', `/trash/${message.id}/restore`)).status).toBe(200);
    expect((await as(alice).get(`/documents/${attachment.id}`)).status).toBe(200);
  });

  it.each([3, 4187])('after each of a generated sequence of operations (seed %i), the usage shown equals a recount of the live documents, and no write passed a quota', { timeout: 900_000 }, async (seed) => {
    const rand = seeded(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const users = [await account('gen-a'), await account('gen-b'), await account('gen-c')];
    const projects = [await project(users[0]!, `gen-${seed}-1`), await project(users[0]!, `gen-${seed}-2`)];
    for (const p of projects) for (const u of users.slice(1)) expect((await as(users[0]!).send('POST', `/projects/${p}/members`, { email: u.email, role: 'editor' })).status).toBe(201);
    const quotas = new Map<string, number | null>([...users.map((u) => [u.email, null] as const), ...projects.map((p) => [p, null] as const)]);
    // Quotas from the start (the sequence changes them): an account's own, another's, a project's.
    for (const [who, bytes] of [[users[0]!, 3000], [users[1]!, 4000]] as const) {
      await setUserQuota(who, bytes);
      quotas.set(who.email, bytes);
    }
    quotas.set(projects[0]!, 3500);
    const blobs: Buffer[] = [];
    const done: string[] = [];
    const said = () => `seed ${seed}, after:\n${done.join('\n')}`;

    /** The live documents of the projects (every page) and their trash, as their owner reads them. */
    const listed = async () => {
      const live: { id: string; project_id: string; uploaded_by: string; size_bytes: number }[] = [];
      const trash: { id: string }[] = [];
      for (const p of projects) {
        let cursor: string | null = null;
        do {
          const page: { body: { documents: typeof live; next_cursor: string | null } } = await as(users[0]!).get(`/documents?project_id=${p}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
          live.push(...page.body.documents);
          cursor = page.body.next_cursor;
        } while (cursor);
        trash.push(...(await as(users[0]!).get(`/trash?project_id=${p}&limit=100`)).body.documents);
      }
      return { live, trash };
    };
    /** What the admin API shows, checked against a recount of what is listed; the figures by account and project. */
    const checked = async () => {
      const { live, trash } = await listed();
      const recount = new Map<string, number>();
      for (const x of live) for (const key of [x.uploaded_by, x.project_id]) recount.set(key, (recount.get(key) ?? 0) + x.size_bytes);
      const shown = new Map<string, number>();
      const all = (await as(admin).get('/admin/users')).body.users as { email: string; usage: { bytes: number } }[];
      for (const u of users) shown.set(u.email, all.find((x) => x.email === u.email)!.usage.bytes);
      for (const p of projects) shown.set(p, await setProjectQuota(p, quotas.get(p)!));
      for (const [key, bytes] of shown) expect(bytes, `${key}: ${said()}`).toBe(recount.get(key) ?? 0);
      return { live, trash, usage: shown };
    };

    let state = await checked();
    for (let step = 0; step < 60; step++) {
      const actor = pick(users);
      const r = rand();
      let op: string;
      let res: { status: number; body: any };
      if (r < 0.35 || (r < 0.45 && blobs.length === 0)) {
        const bytes = text(200 + Math.floor(rand() * 1000));
        blobs.push(bytes);
        const path = rand() < 0.4 ? pick(['a.txt', 'b.txt']) : undefined;
        const to = pick(projects);
        op = `upload ${bytes.length} B into ${to}${path ? ` at ${path}` : ''}`;
        res = await upload(actor, to, [{ name: 'f.txt', bytes }], path ? [path] : undefined);
      } else if (r < 0.45) {
        const bytes = pick(blobs);
        const to = pick(projects);
        op = `upload ${bytes.length} B again into ${to}`;
        res = await upload(actor, to, [{ name: 'again.txt', bytes }]);
      } else if (r < 0.6 && state.live.length > 0) {
        const doc = pick(state.live);
        op = `delete ${doc.id}`;
        res = await as(actor).send('DELETE', `/documents/${doc.id}`);
      } else if (r < 0.7 && state.trash.length > 0) {
        const doc = pick(state.trash);
        op = `restore ${doc.id}`;
        res = await as(actor).send('POST', `/trash/${doc.id}/restore`);
      } else if (r < 0.75 && state.trash.length > 0) {
        const doc = pick(state.trash);
        op = `purge ${doc.id}`;
        res = await as(actor).send('DELETE', `/trash/${doc.id}`);
      } else if (r < 0.88 && state.live.length > 0) {
        const doc = pick(state.live);
        const to = projects.find((p) => p !== doc.project_id)!;
        op = `move ${doc.id} (${doc.size_bytes} B) to ${to}`;
        res = await as(actor).send('PATCH', `/documents/${doc.id}`, { project_id: to });
      } else {
        const onUser = rand() < 0.5;
        const target = onUser ? pick(users) : pick(projects);
        // Near what it holds, so the writes that follow meet it; below it too (an admin may lower a quota past its usage).
        const used = state.usage.get(typeof target === 'string' ? target : target.email)!;
        const bytes = pick([null, null, used + 400, used + 1500, Math.max(0, used - 300)]);
        op = `quota ${bytes} on ${typeof target === 'string' ? target : target.email}`;
        if (typeof target === 'string') await setProjectQuota(target, bytes);
        else await setUserQuota(target, bytes);
        quotas.set(typeof target === 'string' ? target : target.email, bytes);
        res = { status: 200, body: null };
      }
      done.push(`${step}: ${actor.email} ${op} → ${res.status}${res.status >= 400 ? ` ${res.body?.error?.code}` : ''}`);
      expect([200, 201, 202, 204, 404, 409, 507], said()).toContain(res.status);
      const before = state.usage;
      state = await checked();
      if (op.startsWith('quota')) continue;
      // A write that added bytes to an account or a project under a quota kept within it.
      for (const [key, bytes] of state.usage) {
        const limit = quotas.get(key);
        if (limit != null && bytes > before.get(key)!) expect(bytes, `${key} over its quota: ${said()}`).toBeLessThanOrEqual(limit);
      }
    }
    // The sequence went through what it is meant to: refusals past a quota, and each kind of operation taken.
    expect(done.join('\n')).toMatch(/→ 507 quota_exceeded/);
    for (const kind of ['upload', 'again', 'delete', 'restore', 'purge', 'move']) expect(done.some((line) => line.includes(` ${kind} `) && / → 20\d/.test(line)), `${kind}: ${said()}`).toBe(true);
  });
});
