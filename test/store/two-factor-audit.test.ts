/**
 * The stores of issue 52 on both engines: a TOTP time step and a recovery code accepted once however many ask at
 * once, the audit log's filters, cursor and retention, sessions listed and ended by their owner, WebAuthn
 * challenges taken once.
 */
import { expect, it } from 'vitest';
import { AuditEventStore } from '../../src/store/sql/audit-events.js';
import { PasskeyStore } from '../../src/store/sql/passkeys.js';
import { SessionStore } from '../../src/store/sql/sessions.js';
import { TwoFactorStore } from '../../src/store/sql/two-factor.js';
import { UserStore } from '../../src/store/sql/users.js';
import { newId } from '../../src/core/ids.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const T0 = Date.UTC(2030, 0, 1);

describeEachEngine('second factors', ({ handle }) => {
  it('accepts a time step once, later ones only, and a recovery code once, under concurrent requests', async () => {
    const now = () => T0;
    const users = new UserStore(handle().db, now);
    const user = (await users.create('totp@example.com', 'h'))!;
    const store = new TwoFactorStore(handle().db, now);
    expect(await store.hasSecondFactor(user.id)).toBe(false);
    expect(await store.startTotp(user.id, 'sealed-1')).toBe(true);
    expect(await store.startTotp(user.id, 'sealed-2')).toBe(true); // replaced while not yet on
    expect(await store.hasSecondFactor(user.id)).toBe(false);
    const accepted = await Promise.all(Array.from({ length: 8 }, () => store.acceptStep(user.id, 100, 'sealed-2')));
    expect(accepted.filter(Boolean)).toHaveLength(1);
    expect(await store.totp(user.id)).toMatchObject({ secretSealed: 'sealed-2', enabledAt: T0, lastStep: 100 });
    expect(await store.hasSecondFactor(user.id)).toBe(true);
    expect(await store.startTotp(user.id, 'sealed-3')).toBe(false); // on: not replaced
    expect(await store.acceptStep(user.id, 99, 'sealed-2')).toBe(false);
    expect(await store.acceptStep(user.id, 101, 'sealed-2')).toBe(true);

    await store.replaceRecoveryCodes(user.id, ['h1', 'h2', 'h3']);
    const used = await Promise.all(Array.from({ length: 8 }, () => store.useRecoveryCode(user.id, 'h2')));
    expect(used.filter(Boolean)).toHaveLength(1);
    expect(await store.recoveryCodesLeft(user.id)).toBe(2);
    const other = (await users.create('other@example.com', 'h'))!;
    expect(await store.useRecoveryCode(other.id, 'h1')).toBe(false); // another account's code
    expect(await store.anySealed()).toBe(true);
  });

  it('keeps passkeys per account, one account per credential', async () => {
    const now = () => T0;
    const users = new UserStore(handle().db, now);
    const user = (await users.create('pk@example.com', 'h'))!;
    const passkeys = new PasskeyStore(handle().db, now);
    const added = await passkeys.add({ userId: user.id, credentialId: 'cred-1', publicKey: 'pk', counter: 0, transports: ['internal'], name: 'Laptop', backedUp: false });
    expect(added).toMatchObject({ name: 'Laptop', transports: ['internal'] });
    expect(await passkeys.add({ userId: user.id, credentialId: 'cred-1', publicKey: 'pk', counter: 0, transports: [], name: 'Again', backedUp: false })).toBeNull();
    expect(await new TwoFactorStore(handle().db, now).hasSecondFactor(user.id)).toBe(true);
    expect(await passkeys.used(added!.id, 0, 5)).toBe(true);
    expect(await passkeys.byCredentialId('cred-1')).toMatchObject({ counter: 5, lastUsedAt: T0 });
    // A second sign-in verified against the counter before that one (they ran at once) writes nothing: the counter
    // never goes back.
    expect(await passkeys.used(added!.id, 0, 3)).toBe(false);
    expect(await passkeys.byCredentialId('cred-1')).toMatchObject({ counter: 5 });
    // Another account (a real one, with a passkey of its own) cannot remove it: it is still there, read back, and the
    // other account's own passkey is not touched either.
    const other = (await users.create('pk-other@example.com', 'h'))!;
    const theirs = await passkeys.add({ userId: other.id, credentialId: 'cred-2', publicKey: 'pk2', counter: 0, transports: [], name: 'Phone', backedUp: false });
    expect(await passkeys.remove(other.id, added!.id)).toBe(false);
    expect(await passkeys.remove('usr_someone_else', added!.id)).toBe(false);
    expect((await passkeys.list(user.id)).map((p) => p.id)).toEqual([added!.id]);
    expect(await passkeys.byCredentialId('cred-1')).toMatchObject({ id: added!.id, userId: user.id, counter: 5 });
    expect(await new TwoFactorStore(handle().db, now).hasSecondFactor(user.id)).toBe(true);
    expect((await passkeys.list(other.id)).map((p) => p.id)).toEqual([theirs!.id]);
    // Its owner can: gone, as read back the same ways.
    expect(await passkeys.remove(user.id, added!.id)).toBe(true);
    expect(await passkeys.list(user.id)).toEqual([]);
    expect(await passkeys.byCredentialId('cred-1')).toBeNull();
    expect(await new TwoFactorStore(handle().db, now).hasSecondFactor(user.id)).toBe(false);
    expect((await passkeys.list(other.id)).map((p) => p.id)).toEqual([theirs!.id]);
    expect(await users.passkeySignIn(user.id)).toBe(false);
    await users.setPasskeySignIn(user.id, true);
    expect(await users.passkeySignIn(user.id)).toBe(true);
  });

  it('lists a user\'s sessions, ends one only for its owner, and gives a challenge once', async () => {
    let t = T0;
    const now = () => t;
    const users = new UserStore(handle().db, now);
    const user = (await users.create('sessions@example.com', 'h'))!;
    const sessions = new SessionStore(handle().db, now);
    await sessions.create('hash-a', user.id, 60_000, { signedInWith: 'password+totp', seen: { clientIp: '192.0.2.1', userAgent: 'A' } });
    await sessions.create('hash-b', user.id, 60_000, { signedInWith: 'passkey', seen: { clientIp: '192.0.2.2', userAgent: 'B' } });
    await sessions.create('hash-c', null, 60_000, { pendingUserId: user.id, pendingTtlMs: 1_000 });
    expect((await sessions.listForUser(user.id)).map((x) => x.idHash).sort()).toEqual(['hash-a', 'hash-b']);
    expect((await sessions.find('hash-c'))?.pendingUserId).toBe(user.id);
    t += 2_000;
    expect((await sessions.find('hash-c'))?.pendingUserId).toBeNull(); // the second step's five minutes (here one second) are over
    expect(await sessions.deleteOfUser('usr_someone_else', 'hash-a')).toBe(false);
    expect(await sessions.deleteOfUser(user.id, 'hash-a')).toBe(true);
    await sessions.setChallenge('hash-b', 'challenge-1', t + 1_000);
    const taken = await Promise.all([sessions.takeChallenge('hash-b'), sessions.takeChallenge('hash-b')]);
    expect(taken.filter((c) => c !== null)).toEqual(['challenge-1']);
    await sessions.setChallenge('hash-b', 'challenge-2', t + 1_000);
    t += 2_000;
    expect(await sessions.takeChallenge('hash-b')).toBeNull(); // expired
  });
});

describeEachEngine('audit events', ({ handle }) => {
  const row = (at: number, type: string, over: Partial<Record<string, string | null>> = {}) => ({
    id: newId('aud', at),
    at,
    type,
    actor_id: 'usr_a',
    actor_email: 'Alice@Example.com',
    via: 'session',
    credential_id: null,
    target_type: 'document',
    target_id: 'doc_1',
    target_label: 'a.pdf',
    client_ip: '192.0.2.1',
    user_agent: null,
    request_id: null,
    details: JSON.stringify({ n: at }),
    ...over,
  });

  it('lists newest first by type, type family, actor, target, address and time, pages by cursor, and forgets what retention drops', async () => {
    const store = new AuditEventStore(handle().db);
    const rows = [
      row(T0, 'sign_in.failed', { actor_id: null, actor_email: null, target_type: null, target_id: null }),
      row(T0 + 1, 'sign_in.succeeded'),
      row(T0 + 2, 'sign_inx.other'),
      row(T0 + 3, 'document.deleted', { client_ip: '192.0.2.9' }),
      row(T0 + 4, 'document.moved', { actor_id: 'usr_b', actor_email: 'bob@example.com', target_id: 'doc_2' }),
    ];
    for (const r of rows) await store.append(r);
    const ids = (list: { id: string }[]) => list.map((e) => e.id);
    expect(ids(await store.list({}, 10))).toEqual(rows.map((r) => r.id).reverse());
    expect((await store.list({ type: 'sign_in.' }, 10)).map((e) => e.type)).toEqual(['sign_in.succeeded', 'sign_in.failed']);
    expect((await store.list({ type: 'document.deleted' }, 10)).map((e) => e.details)).toEqual([{ n: T0 + 3 }]);
    expect(ids(await store.list({ actorId: 'usr_b' }, 10))).toEqual([rows[4]!.id]);
    expect((await store.list({ actorEmail: 'alice@example.com' }, 10)).length).toBe(3);
    expect(ids(await store.list({ targetId: 'doc_2' }, 10))).toEqual([rows[4]!.id]);
    expect(ids(await store.list({ clientIp: '192.0.2.9' }, 10))).toEqual([rows[3]!.id]);
    expect(ids(await store.list({ since: T0 + 1, until: T0 + 3 }, 10))).toEqual([rows[2]!.id, rows[1]!.id]);
    expect(ids(await store.list({ before: rows[3]!.id }, 2))).toEqual([rows[2]!.id, rows[1]!.id]);
    expect(await store.purgeBefore(T0 + 2)).toBe(2);
    expect(ids(await store.list({}, 10))).toEqual(rows.slice(2).map((r) => r.id).reverse());
  });
});
