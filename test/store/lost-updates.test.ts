/**
 * Writes that decided on a row read before another replica's change committed, and so lost it (shared mode: several
 * replicas on one PostgreSQL database). The PostgreSQL tests hold the other replica's change in an open transaction
 * on a connection of their own until the write under test waits on a lock it holds (seen in pg_stat_activity), or is
 * done without waiting, then commit it: the write must count that change, not what was there before. Only
 * PostgreSQL: on SQLite one daemon serves a data directory through one connection, where a transaction never
 * interleaves with another. The races one daemon has with itself (two requests at once) run on both engines.
 */
import { describe, expect, it } from 'vitest';
import { AccessControl, sessionActor } from '../../src/access/access-control.js';
import { openTeamAdmin } from '../../src/access/open-team-admin.js';
import { Sharing } from '../../src/access/sharing.js';
import { TwoFactorService } from '../../src/auth/two-factor.js';
import { SecretSealer } from '../../src/core/sealed-secret.js';
import { sha256Hex } from '../../src/core/secrets.js';
import { Mailer } from '../../src/mail/mailer.js';
import { LocalEvents } from '../../src/store/coordination.js';
import type { Db } from '../../src/store/sql/database.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { GroupStore } from '../../src/store/sql/groups.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { KnownDeviceStore } from '../../src/store/sql/known-devices.js';
import { LabelStore } from '../../src/store/sql/labels.js';
import { LoginAttemptStore } from '../../src/store/sql/login-attempts.js';
import { PasskeyStore } from '../../src/store/sql/passkeys.js';
import { ProjectMemberStore } from '../../src/store/sql/project-members.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { SettingsStore } from '../../src/store/sql/settings.js';
import { TwoFactorStore } from '../../src/store/sql/two-factor.js';
import { type User, UserStore } from '../../src/store/sql/users.js';
import { RecordedAudit } from '../helpers/audit.js';
import { postgresBlock, whileHeld } from '../helpers/held-transaction.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const SKIP = postgresUnavailable();
const LAST_ADMIN = 'this is the only active admin: make another account an admin first';

let t = Date.UTC(2030, 0, 1);
const now = () => ++t;

/** TeamAdmin on `db` with a mail server (the outbox is where its mail goes), as the daemon wires it. */
function teamAdmin(db: Db) {
  const mailer = new Mailer({ db, enabled: true, sealer: new SecretSealer(Buffer.alloc(32, 7)), events: new LocalEvents(), now, publicUrl: () => 'https://search.example.com' });
  return openTeamAdmin(db, now, new RecordedAudit(), mailer);
}

/** Two new accounts, the library's only admins. */
async function twoAdmins(db: Db, tag: string): Promise<[User, User]> {
  const users = new UserStore(db, now);
  for (const u of await users.list()) if (u.isAdmin) await users.setAdmin(u.id, false);
  const made: User[] = [];
  for (const name of ['a', 'b']) {
    const user = (await users.create(`${name}-${tag}@example.com`, 'h'))!;
    await users.setAdmin(user.id, true);
    made.push({ ...user, isAdmin: true });
  }
  return [made[0]!, made[1]!];
}

async function activeAdmins(db: Db): Promise<number> {
  return (await new UserStore(db, now).list()).filter((u) => u.isAdmin && u.disabledAt === null).length;
}

async function resetMails(db: Db, to: string): Promise<number> {
  const row = await db.selectFrom('mail_outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', 'password_reset').where('to_address', '=', to).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function openResets(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('password_resets').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sharing on `db`, as the daemon wires it. */
function sharing(db: Db) {
  const [members, projects, users] = [new ProjectMemberStore(db, now), new ProjectStore(db, now), new UserStore(db, now)];
  const access = new AccessControl({ grants: members, projects, documents: new DocumentStore(db, new JobStore(db, now), now), users });
  return new Sharing({ access, members, projects, users, groups: new GroupStore(db, now), settings: new SettingsStore(db), audit: new RecordedAudit() });
}

/** The second factors' service on `db`, as the daemon wires it. */
function twoFactor(db: Db) {
  return new TwoFactorService({
    store: new TwoFactorStore(db, now),
    passkeys: new PasskeyStore(db, now),
    users: new UserStore(db, now),
    attempts: new LoginAttemptStore(db, now),
    sealer: new SecretSealer(Buffer.alloc(32, 7)),
    policy: 'off',
    issuer: () => 'docsearch',
    now,
  });
}

describeEachEngine('changes one daemon makes at once', ({ handle }) => {
  it("an account's first two sign-ins at once: one of them is the first (the other, from another browser, gets its notice)", async () => {
    const db = handle().db;
    const users = new UserStore(db, now);
    const userId = (await users.create('first-sign-ins@example.com', 'h'))!.id;
    const before = await Promise.all([users.signedIn(userId), users.signedIn(userId)]);
    expect(before.filter((b) => b === null)).toHaveLength(1);
  });

  it('two admins unmaking each other at once leave one admin (each counted two)', async () => {
    const db = handle().db;
    const [a, b] = await twoAdmins(db, 'unmake');
    const team = teamAdmin(db);
    const outcomes = await Promise.allSettled([team.setAdmin(a, false), team.setAdmin(b, false)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(String((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason)).toContain(LAST_ADMIN);
    expect(await activeAdmins(db)).toBe(1);
    // The one who is left stays one: unmaking them is refused as before.
    const left = (await new UserStore(db, now).list()).find((u) => u.isAdmin)!;
    await expect(team.setAdmin(left, false)).rejects.toThrow(LAST_ADMIN);
    await expect(team.disable(left)).rejects.toThrow(LAST_ADMIN);
    // Making them an admin again, or enabling them, is no change the rule refuses.
    await expect(team.setAdmin(left, true)).resolves.toBeUndefined();
    await expect(team.enable(left)).resolves.toBeUndefined();
  });

  it('two admins deleting each other at once leave one admin, who keeps being one', async () => {
    const db = handle().db;
    const users = new UserStore(db, now);
    const [a, b] = await twoAdmins(db, 'delete');
    const team = teamAdmin(db);
    const outcomes = await Promise.allSettled([team.delete(a), team.delete(b)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await activeAdmins(db)).toBe(1);
    const kept = outcomes[0]!.status === 'rejected' ? a : b;
    expect(await users.findById(kept.id)).toMatchObject({ isAdmin: true, disabledAt: null });
  });

  it('a refused delete gives the admin back their flag', async () => {
    const db = handle().db;
    const users = new UserStore(db, now);
    const [a] = await twoAdmins(db, 'refused');
    // A project with a member holds something: without an account to hand it to, the delete is refused.
    const project = (await new ProjectStore(db, now).create(a.id, { name: 'kept' }))!;
    const member = (await users.create('m-refused@example.com', 'h'))!;
    await new ProjectMemberStore(db, now).upsert(project.id, { id: member.id, kind: 'user' }, 'viewer', a.id);
    await expect(teamAdmin(db).delete(a)).rejects.toThrow(/owns 1 project/);
    expect(await users.findById(a.id)).toMatchObject({ isAdmin: true, disabledAt: null });
  });

  it('"Forgot password?" sent several times at once mails one link', async () => {
    const db = handle().db;
    const user = (await new UserStore(db, now).create('forgot-burst@example.com', 'h'))!;
    const team = teamAdmin(db);
    await Promise.all([1, 2, 3, 4].map(() => team.forgotPassword(user.email)));
    expect(await resetMails(db, user.email)).toBe(1);
    expect(await openResets(db, user.id)).toBe(1);
  });

  it('two second factors set up at once make one set of recovery codes, and the set shown works', async () => {
    const db = handle().db;
    const user = (await new UserStore(db, now).create('recovery-burst@example.com', 'h'))!;
    const service = twoFactor(db);
    const shown = (await Promise.all([service.recoveryCodesIfNone(user.id), service.recoveryCodesIfNone(user.id)])).filter((codes) => codes !== undefined);
    expect(shown).toHaveLength(1);
    expect(await service.verifyCode(user, shown[0]![0]!, '192.0.2.1')).toMatchObject({ ok: true, method: 'recovery', recoveryCodesLeft: 9 });
  });
});

describe.skipIf(SKIP !== null)(`a write and another replica's change committed meanwhile, on PostgreSQL${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let url: string;
  let db: Db;
  postgresBlock((handle, at) => {
    url = at;
    db = handle.db;
  });

  // First of its block: the database has no account yet.
  it("a library's first account made on two replicas at once: one admin", async () => {
    // The other replica's first account, made an admin on the empty table and not yet committed.
    const other: [string, unknown[]][] = [
      ['insert into users (id, email, password_hash, created_at, updated_at, is_admin) values ($1, $2, $3, $4, $4, 1)', ['usr_first_other', 'first-other@example.com', 'h', now()]],
    ];
    const mine = await whileHeld(url, db, other, () => new UserStore(db, now).create('first-mine@example.com', 'h'));
    expect(mine).toMatchObject({ isAdmin: false });
    expect(await activeAdmins(db)).toBe(1);
  });

  it("unmaking an admin while another replica unmakes the other one: refused, one admin left", async () => {
    const [a, b] = await twoAdmins(db, 'held');
    // The other replica unmakes b, having counted two admins as well.
    const other: [string, unknown[]][] = [['update users set is_admin = 0 where id = $1', [b.id]]];
    await expect(whileHeld(url, db, other, () => teamAdmin(db).setAdmin(a, false))).rejects.toThrow(LAST_ADMIN);
    expect(await activeAdmins(db)).toBe(1);
    expect(await new UserStore(db, now).findById(a.id)).toMatchObject({ isAdmin: true });
  });

  it('"Forgot password?" on two replicas at once: one link, one mail', async () => {
    const user = (await new UserStore(db, now).create('forgot-held@example.com', 'h'))!;
    // The other replica's request: the account's row locked, its link recorded (its mail queued alike).
    const other: [string, unknown[]][] = [
      ['select id from users where id = $1 for update', [user.id]],
      ['insert into password_resets (token_hash, user_id, created_by, created_at, expires_at, used_at) values ($1, $2, null, $3, $4, null)', [sha256Hex('other-link'), user.id, now(), t + 3_600_000]],
    ];
    await whileHeld(url, db, other, () => teamAdmin(db).forgotPassword(user.email));
    expect(await resetMails(db, user.email)).toBe(0);
    expect(await openResets(db, user.id)).toBe(1);
  });

  it('an admin\'s reset link made while another replica makes one: only the newer link works', async () => {
    const user = (await new UserStore(db, now).create('reset-held@example.com', 'h'))!;
    const other: [string, unknown[]][] = [
      ['select id from users where id = $1 for update', [user.id]],
      ['insert into password_resets (token_hash, user_id, created_by, created_at, expires_at, used_at) values ($1, $2, null, $3, $4, null)', [sha256Hex('other-admin-link'), user.id, now(), t + 3_600_000]],
    ];
    const issued = await whileHeld(url, db, other, () => teamAdmin(db).resetLink(user, null));
    expect(await openResets(db, user.id)).toBe(1);
    expect(await teamAdmin(db).resetFor(issued.token)).toMatchObject({ id: user.id });
  });

  it('a document moved while another replica queues it again (new bytes from its source): busy, not moved', async () => {
    const userId = (await new UserStore(db, now).create('mover@example.com', 'h'))!.id;
    const projects = new ProjectStore(db, now);
    const from = await projects.ensureDefault(userId);
    const to = (await projects.create(userId, { name: 'elsewhere' }))!;
    const jobs = new JobStore(db, now);
    const documents = new DocumentStore(db, jobs, now);
    const { document } = await documents.createQueued({ userId, projectId: from.id, filename: 'a.txt', contentType: 'text/plain', sizeBytes: 1, sha256: sha256Hex('a'), metadata: {} });
    const job = (await jobs.claim('worker', 60_000))!;
    await documents.markFailed(document.id, job, 'unreadable');
    // The other replica's replaceContent (or a retry): the settled document queued for its worker.
    const other: [string, unknown[]][] = [["update documents set status = 'queued', progress = 0 where id = $1", [document.id]]];
    const outcome = await whileHeld(url, db, other, () => documents.move(document.id, to.id));
    expect(outcome).toEqual({ outcome: 'busy' });
    expect(await documents.get(document.id)).toMatchObject({ projectId: from.id, status: 'queued' });
  });

  it("a document's labels set on two replicas at once: the last set is its labels, not both", async () => {
    const userId = (await new UserStore(db, now).create('labeller@example.com', 'h'))!.id;
    const project = await new ProjectStore(db, now).ensureDefault(userId);
    const documents = new DocumentStore(db, new JobStore(db, now), now);
    const { document } = await documents.createQueued({ userId, projectId: project.id, filename: 'l.txt', contentType: 'text/plain', sizeBytes: 1, sha256: sha256Hex('l'), metadata: {} });
    const labels = new LabelStore(db, now);
    const [red, blue] = [(await labels.create(project.id, 'red'))!, (await labels.create(project.id, 'blue'))!];
    // The other replica's LabelStore.set(document, [red]).
    const other: [string, unknown[]][] = [
      ['select id from documents where id = $1 for update', [document.id]],
      ['delete from document_labels where document_id = $1', [document.id]],
      ['insert into document_labels (id, document_id, label_id, created_at) values ($1, $2, $3, $4)', [`${document.id}:${red.id}`, document.id, red.id, now()]],
    ];
    await whileHeld(url, db, other, () => labels.set(document.id, [blue.id]));
    expect(await labels.idsOf(document.id)).toEqual([blue.id]);
  });

  it('a code of the secret being set up, accepted while another tab (replica) sets up a new one: the new one is not put in force', async () => {
    const userId = (await new UserStore(db, now).create('totp-held@example.com', 'h'))!.id;
    const store = new TwoFactorStore(db, now);
    await store.startTotp(userId, 'sealed-old');
    // The other replica's startTotp: the secret being set up replaced.
    const other: [string, unknown[]][] = [["update totp_secrets set secret_sealed = 'sealed-new', last_step = null where user_id = $1", [userId]]];
    expect(await whileHeld(url, db, other, () => store.acceptStep(userId, 100, 'sealed-old'))).toBe(false);
    expect(await store.totp(userId)).toMatchObject({ secretSealed: 'sealed-new', enabledAt: null });
  });

  it('a project transferred while another of its owners transfers it elsewhere: refused, the other transfer and the members stay', async () => {
    const users = new UserStore(db, now);
    const [owner, coOwner, editor, other] = await Promise.all(['owner', 'co-owner', 'editor', 'other'].map(async (n) => (await users.create(`${n}-transfer@example.com`, 'h'))!.id));
    const project = (await new ProjectStore(db, now).create(owner!, { name: 'handed on' }))!;
    const members = new ProjectMemberStore(db, now);
    await members.upsert(project.id, { id: coOwner!, kind: 'user' }, 'owner', owner!);
    await members.upsert(project.id, { id: editor!, kind: 'user' }, 'editor', owner!);
    // The co-owner's transfer to `other`, on the other replica.
    const held: [string, unknown[]][] = [['update projects set user_id = $1 where id = $2', [other, project.id]]];
    await expect(whileHeld(url, db, held, () => sharing(db).transfer(sessionActor(owner!), project.id, 'editor-transfer@example.com'))).rejects.toThrow(/given to someone else meanwhile/);
    expect(await new ProjectStore(db, now).get(project.id)).toMatchObject({ userId: other });
    expect((await members.list(project.id)).map((m) => [m.memberId, m.role])).toEqual([
      [coOwner, 'owner'],
      [editor, 'editor'],
    ]);
  });

  it("an account's first sign-in on another replica, committed while this one signs in: this one is not the first", async () => {
    const userId = (await new UserStore(db, now).create('first-elsewhere@example.com', 'h'))!.id;
    const other: [string, unknown[]][] = [['update users set last_sign_in_at = $1 where id = $2', [now(), userId]]];
    expect(await whileHeld(url, db, other, () => new UserStore(db, now).signedIn(userId))).not.toBeNull();
  });

  it('a sign-in from a new browser made on two replicas at once is new for one of them only (one notice mail)', async () => {
    const userId = (await new UserStore(db, now).create('browser@example.com', 'h'))!.id;
    const id = sha256Hex(`${userId}:browser-cookie`);
    const other: [string, unknown[]][] = [['insert into known_devices (id, user_id, user_agent, created_at, last_seen_at) values ($1, $2, null, $3, $3)', [id, userId, now()]]];
    expect(await whileHeld(url, db, other, () => new KnownDeviceStore(db, now).seen(id, userId, null))).toBe(false);
  });
});
