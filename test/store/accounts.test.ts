import { expect, it } from 'vitest';
import { ApiKeyService } from '../../src/auth/api-keys.js';
import { WebSessionService } from '../../src/auth/web-sessions.js';
import { ApiKeyStore } from '../../src/store/sql/api-keys.js';
import type { Db } from '../../src/store/sql/database.js';
import { LoginAttemptStore, type ThrottlePolicy } from '../../src/store/sql/login-attempts.js';
import { SessionStore } from '../../src/store/sql/sessions.js';
import { SetupTokenStore } from '../../src/store/sql/setup-tokens.js';
import { UserStore } from '../../src/store/sql/users.js';
import { describeEachEngine } from '../helpers/store-dialects.js';
import { RecordedAudit } from '../helpers/audit.js';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

/** The database with a count of the UPDATE statements sent through it. */
function countingUpdates(db: Db) {
  let updates = 0;
  const counted = db.withPlugin({
    transformQuery: (args) => {
      if (args.node.kind === 'UpdateQueryNode') updates++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return { db: counted, updates: () => updates };
}

/** A clock the test moves. */
function clock(start = Date.UTC(2030, 0, 1)) {
  let t = start;
  const now = () => t;
  return Object.assign(now, { advance: (ms: number) => (t += ms) });
}

describeEachEngine('users', ({ handle }) => {
  it('creates a user once per email, ignoring ASCII case only, and finds it the same way', async () => {
    const users = new UserStore(handle().db, clock());
    const alice = await users.create('Alice@Example.com', 'hash-a');
    expect(alice).toMatchObject({ email: 'Alice@Example.com' });
    expect(await users.create('alice@example.COM', 'hash-b')).toBeNull();
    expect(await users.findByEmail('ALICE@EXAMPLE.COM')).toMatchObject({ id: alice!.id, passwordHash: 'hash-a' });
    // Non-ASCII letters keep their case on both engines (SQLite's NOCASE folds A–Z only): Émile and émile are two people.
    const upper = await users.create('Émile@example.com', 'hash-e1');
    const lower = await users.create('émile@example.com', 'hash-e2');
    expect(upper).not.toBeNull();
    expect(lower).not.toBeNull();
    expect((await users.findByEmail('ÉMILE@EXAMPLE.COM'))?.id).toBe(upper!.id);
    expect((await users.findByEmail('émile@Example.com'))?.id).toBe(lower!.id);
    expect(await users.findByEmail('nobody@example.com')).toBeNull();
    expect(await users.findById(alice!.id)).toEqual({ id: alice!.id, email: 'Alice@Example.com', createdAt: alice!.createdAt, isAdmin: true, disabledAt: null, adminManagedBy: null });
    expect(await users.count()).toBe(3);
    // The first account is the admin; the others are not.
    expect(upper!.isAdmin).toBe(false);
    expect((await users.list()).filter((u) => u.isAdmin).map((u) => u.id)).toEqual([alice!.id]);
  });

  it('disables, enables and deletes an account: a deleted one keeps its row, frees its e-mail and is found by nothing', async () => {
    const users = new UserStore(handle().db, clock());
    const keys = new ApiKeyStore(handle().db, clock());
    const bob = (await users.create('bob-offboarded@example.com', 'hash-b'))!;
    const key = await keys.create({ userId: bob.id, name: 'k', prefix: 'dsk_bob0', last4: 'bob0', keyHash: 'hash-bob-key', scopes: ['read:documents'] });
    expect(await keys.findActiveByHash('hash-bob-key')).toEqual(key);
    expect(await users.setDisabled(bob.id, 123)).toBe(true);
    expect(await users.findById(bob.id)).toMatchObject({ disabledAt: 123 });
    expect(await keys.findActiveByHash('hash-bob-key')).toBeNull(); // a disabled account's key resolves to nothing
    expect(await users.setDisabled(bob.id, null)).toBe(true);
    expect(await keys.findActiveByHash('hash-bob-key')).toEqual(key);
    expect(await users.tombstone(bob.id)).toBe(true);
    expect(await users.findById(bob.id)).toBeNull();
    expect(await users.findByEmail('bob-offboarded@example.com')).toBeNull();
    expect(await keys.findActiveByHash('hash-bob-key')).toBeNull();
    expect((await users.list()).some((u) => u.id === bob.id)).toBe(false);
    const again = await users.create('bob-offboarded@example.com', 'hash-b2');
    expect(again).not.toBeNull();
    expect(again!.id).not.toBe(bob.id);
  });

  it('gives one email to exactly one of many concurrent creators', async () => {
    const users = new UserStore(handle().db, clock());
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => users.create(i % 2 ? 'race@example.com' : 'RACE@example.com', `h${i}`)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
  });
});

describeEachEngine('sessions', ({ handle }) => {
  it('finds live sessions, slides expiry at most once a minute, deletes and purges', async () => {
    const now = clock();
    const users = new UserStore(handle().db, now);
    const user = (await users.create('session@example.com', 'h'))!;
    const sessions = new SessionStore(handle().db, now);
    await sessions.create('hash-1', user.id, 10 * MIN);
    await sessions.create('hash-2', null, MIN);
    const created = now();
    expect(await sessions.find('hash-1')).toEqual({ idHash: 'hash-1', userId: user.id, expiresAt: now() + 10 * MIN, lastSeenAt: created, onceSealed: null, signedInWith: null, clientIp: null, userAgent: null, pendingUserId: null, provider: null, confirmedAt: created });
    now.advance(30_000);
    await sessions.touch((await sessions.find('hash-1'))!, 10 * MIN); // within the minute: not written
    expect((await sessions.find('hash-1'))?.expiresAt).toBe(now() - 30_000 + 10 * MIN);
    // A row read before another request wrote it is written once: the condition in SQL holds.
    const stale = { idHash: 'hash-1', lastSeenAt: created - MIN };
    await sessions.touch(stale, 10 * MIN);
    expect((await sessions.find('hash-1'))?.expiresAt).toBe(now() - 30_000 + 10 * MIN);
    now.advance(31_000);
    await sessions.touch((await sessions.find('hash-1'))!, 10 * MIN);
    expect((await sessions.find('hash-1'))?.expiresAt).toBe(now() + 10 * MIN);
    now.advance(MIN);
    expect(await sessions.find('hash-2')).toBeNull(); // expired
    expect(await sessions.deleteExpired()).toBe(1);
    await sessions.delete('hash-1');
    expect(await sessions.find('hash-1')).toBeNull();
  });
});

describeEachEngine('per-request credential checks', ({ handle }) => {
  // Each statement is a round trip on PostgreSQL: a key or session used many times a minute is written once.
  it('write an API key\'s last use and a session\'s expiry once a minute, not on every request', async () => {
    const now = clock();
    const counted = countingUpdates(handle().db);
    const user = (await new UserStore(counted.db, now).create('busy@example.com', 'h'))!;
    const keys = new ApiKeyService(new ApiKeyStore(counted.db, now), now, new RecordedAudit());
    const sessions = new WebSessionService(new SessionStore(counted.db, now));
    const { key } = await keys.issue(user.id, 'ci');
    const session = await sessions.start(user.id);
    for (let i = 0; i < 10; i++) {
      expect(await keys.resolve(key)).toMatchObject({ userId: user.id });
      expect((await sessions.load(session.id))?.userId).toBe(user.id);
      now.advance(1000);
    }
    expect(counted.updates()).toBe(1); // the key's first use; the session was created seen
    now.advance(MIN);
    await keys.resolve(key);
    await sessions.load(session.id);
    expect(counted.updates()).toBe(3);
  });
});

describeEachEngine('setup tokens', ({ handle, another }) => {
  it('keeps every issued link valid until one is used, then none; stale unused ones go', async () => {
    const now = clock();
    const tokens = new SetupTokenStore(handle().db, now);
    await tokens.issue('stale');
    now.advance(25 * 3600_000);
    await tokens.issue('replica-a');
    await tokens.issue('replica-b');
    expect(await tokens.isValid('stale')).toBe(false);
    expect(await tokens.isValid('replica-a')).toBe(true);
    expect(await tokens.isValid('replica-b')).toBe(true);
    expect(await tokens.consume('not-issued')).toBe(false);
    expect(await tokens.isValid('replica-a')).toBe(true);
    expect(await tokens.consume('replica-b')).toBe(true);
    expect(await tokens.isValid('replica-a')).toBe(false);
    expect(await tokens.consume('replica-a')).toBe(false);
    expect(await tokens.consume('replica-b')).toBe(false);
  });

  it('lets exactly one of many concurrent consumers (different links, different pools) through', async () => {
    const now = clock();
    const handles = [handle(), await another(), await another()];
    const stores = handles.map((h) => new SetupTokenStore(h.db, now));
    const names = Array.from({ length: 6 }, (_, i) => `concurrent-${i}`);
    for (const name of names) await stores[0]!.issue(name);
    const results = await Promise.all(names.flatMap((name, i) => [stores[i % 3]!.consume(name), stores[(i + 1) % 3]!.consume(name)]));
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});

const POLICY: ThrottlePolicy = { maxFailures: 5, windowMs: 15 * MIN, lockMs: 15 * MIN };

describeEachEngine('login attempts', ({ handle, another }) => {
  it('lets 5 attempts through, locks at the 5th, refuses (uncounted) until the lock ends, then starts over', async () => {
    const now = clock();
    const attempts = new LoginAttemptStore(handle().db, now);
    const keys = ['email:a@example.com', 'ip:10.0.0.1'];
    for (let i = 0; i < 5; i++) expect(await attempts.take(keys, POLICY)).toBe(0);
    expect(await attempts.take(keys, POLICY)).toBe(15 * MIN);
    now.advance(5 * MIN);
    expect(await attempts.take(keys, POLICY)).toBe(10 * MIN);
    // A locked key refuses without counting the other key: the address is not held against another account's lock.
    expect(await attempts.take(['email:a@example.com', 'ip:10.0.0.2'], POLICY)).toBe(10 * MIN);
    for (let i = 0; i < 5; i++) expect(await attempts.take(['email:b@example.com', 'ip:10.0.0.2'], POLICY)).toBe(0);
    now.advance(10 * MIN);
    expect(await attempts.take(keys, POLICY)).toBe(0); // the lock ended: a fresh count
    for (let i = 0; i < 4; i++) expect(await attempts.take(keys, POLICY)).toBe(0);
    expect(await attempts.take(keys, POLICY)).toBeGreaterThan(0);
  });

  it('starts a fresh window after windowMs, and refund gives an attempt back (unlocking at the limit)', async () => {
    const now = clock();
    const attempts = new LoginAttemptStore(handle().db, now);
    const keys = ['email:w@example.com'];
    for (let i = 0; i < 4; i++) expect(await attempts.take(keys, POLICY)).toBe(0);
    now.advance(16 * MIN);
    for (let i = 0; i < 5; i++) expect(await attempts.take(keys, POLICY)).toBe(0); // the old 4 no longer count
    await attempts.refund('email:w@example.com', POLICY); // the 5th was a success after all
    expect(await attempts.take(keys, POLICY)).toBe(0);
    expect(await attempts.take(keys, POLICY)).toBe(15 * MIN);
    await attempts.clear('email:w@example.com');
    expect(await attempts.take(keys, POLICY)).toBe(0);
    await attempts.refund('email:unknown@example.com', POLICY); // nothing to give back: no error
  });

  it('purges counters a day old that hold no lock in force; a live lock stays (rows of unauthenticated requests)', async () => {
    const now = clock();
    const attempts = new LoginAttemptStore(handle().db, now);
    const stale = Array.from({ length: 50 }, (_, i) => `email:guess-${i}@example.com`);
    for (const key of stale) expect(await attempts.take([key], POLICY)).toBe(0);
    const locked = ['email:locked@example.com'];
    for (let i = 0; i < 5; i++) await attempts.take(locked, { ...POLICY, lockMs: 2 * DAY });
    now.advance(DAY + 10 * MIN);
    expect(await attempts.purgeStale(now() - DAY)).toBeGreaterThanOrEqual(stale.length); // and earlier tests' counters
    expect(await attempts.purgeStale(now() - DAY)).toBe(0);
    expect(await attempts.take(locked, POLICY)).toBeGreaterThan(0); // still locked: its row was kept
  });

  it('200 concurrent attempts over three pools check at most 5 passwords', async () => {
    const now = clock();
    const stores = [handle(), await another(), await another()].map((h) => new LoginAttemptStore(h.db, now));
    const keys = ['email:victim@example.com', 'ip:203.0.113.9'];
    const waits = await Promise.all(Array.from({ length: 200 }, (_, i) => stores[i % 3]!.take(keys, POLICY)));
    expect(waits.filter((w) => w === 0)).toHaveLength(5);
    expect(waits.filter((w) => w > 0).every((w) => w <= 15 * MIN)).toBe(true);
  });
});

describeEachEngine('API keys', ({ handle }) => {
  it('creates, lists, finds by hash, revokes once and records use at most once a minute', async () => {
    const now = clock();
    const user = (await new UserStore(handle().db, now).create('keys@example.com', 'h'))!;
    const keys = new ApiKeyStore(handle().db, now);
    const a = await keys.create({ userId: user.id, name: 'ci', prefix: 'dsk_abcd', last4: 'wxyz', keyHash: 'hash-a', scopes: ['read:documents'] });
    now.advance(1);
    const b = await keys.create({ userId: user.id, name: null, prefix: 'dsk_efgh', last4: '1234', keyHash: 'hash-b', scopes: ['read:documents', 'write:documents'] });
    expect((await keys.listActive(user.id)).map((k) => k.id)).toEqual([b.id, a.id]);
    expect(await keys.findActiveByHash('hash-b')).toEqual(b);
    await keys.touch(a);
    const used = now();
    now.advance(30_000);
    await keys.touch((await keys.findActiveByHash('hash-a'))!);
    expect((await keys.findActiveByHash('hash-a'))?.lastUsedAt).toBe(used);
    await keys.touch(a); // read before the first use: the condition in SQL keeps the first
    expect((await keys.findActiveByHash('hash-a'))?.lastUsedAt).toBe(used);
    now.advance(31_000);
    await keys.touch((await keys.findActiveByHash('hash-a'))!);
    expect((await keys.findActiveByHash('hash-a'))?.lastUsedAt).toBe(now());
    expect(await keys.revoke('someone-else', a.id)).toBe(false);
    expect(await keys.revoke(user.id, a.id)).toBe(true);
    expect(await keys.revoke(user.id, a.id)).toBe(false);
    expect(await keys.findActiveByHash('hash-a')).toBeNull();
    expect((await keys.listActive(user.id)).map((k) => k.id)).toEqual([b.id]);
  });
});

describeEachEngine('API key expiry', ({ handle }) => {
  it('a key works until the moment it expires, then is refused saying when; it stays listed, and is audited with it', async () => {
    const now = clock(Date.UTC(2027, 0, 5, 14, 3));
    const user = (await new UserStore(handle().db, now).create('expiry@example.com', 'h'))!;
    const audit = new RecordedAudit();
    const keys = new ApiKeyService(new ApiKeyStore(handle().db, now), now, audit);
    const lasting = await keys.issue(user.id, 'lasting');
    now.advance(1); // ids sort by time: newest first
    const { key, record } = await keys.issue(user.id, 'weekly', { expires: { days: 7 } });
    expect(record.expiresAt).toBe(now() + 7 * DAY);
    expect(audit.events.at(-1)).toMatchObject({ type: 'api_key.created', details: { expires_at: '2027-01-12T14:03:00.001Z' } });
    expect(audit.events.at(-2)).toMatchObject({ details: { expires_at: null } });
    now.advance(7 * DAY - 1);
    expect(await keys.resolve(key)).toMatchObject({ userId: user.id, kind: 'api_key', expiresAt: record.expiresAt });
    expect(keys.expired(record)).toBe(false);
    now.advance(1);
    expect(await keys.resolve(key)).toEqual({ refused: 'the API key expired on 2027-01-12 14:03 UTC' });
    expect(await keys.resolve(lasting.key)).toMatchObject({ userId: user.id });
    expect(keys.expired(record)).toBe(true);
    // Listed, expired, until revoked: its owner sees why a script stopped.
    expect((await keys.list(user.id)).map((k) => [k.name, k.expiresAt])).toEqual([
      ['weekly', record.expiresAt],
      ['lasting', null],
    ]);
    expect(await keys.revoke(user.id, record.id)).toBe(true);
    expect(await keys.resolve(key)).toBeNull();
  });

  it('refuses an expiry already past, more than 3650 days away, or of a lifetime out of range, and makes no key', async () => {
    const now = clock(Date.UTC(2027, 0, 5));
    const user = (await new UserStore(handle().db, now).create('bad-expiry@example.com', 'h'))!;
    const keys = new ApiKeyService(new ApiKeyStore(handle().db, now), now, new RecordedAudit());
    await expect(keys.issue(user.id, 'past', { expires: { at: now() } })).rejects.toMatchObject({ code: 'invalid_request', message: 'the expiry 2027-01-05T00:00:00.000Z has already passed: give a moment in the future' });
    await expect(keys.issue(user.id, 'far', { expires: { at: now() + 3651 * DAY } })).rejects.toMatchObject({ message: 'the expiry 2037-01-03T00:00:00.000Z is more than 3650 days away' });
    await expect(keys.issue(user.id, 'zero', { expires: { days: 0 } })).rejects.toMatchObject({ message: 'a key lasts 1 to 3650 days, not 0' });
    expect(await keys.list(user.id)).toEqual([]);
    expect((await keys.issue(user.id, 'longest', { expires: { days: 3650 } })).record.expiresAt).toBe(now() + 3650 * DAY);
  });
});
