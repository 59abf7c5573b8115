/**
 * E-mail addresses stored decomposed (NFD: an account, invitation or audit event written before addresses were
 * composed on write) are the addresses typed composed (NFC), on both engines, with no migration: found by either
 * spelling, and no second account is made in the other (docs/api.md#names). A key's name is stored composed.
 */
import { expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { ApiKeyStore } from '../../src/store/sql/api-keys.js';
import { AuditEventStore } from '../../src/store/sql/audit-events.js';
import { FilterLookups } from '../../src/store/sql/document-filters.js';
import { GroupStore } from '../../src/store/sql/groups.js';
import { InviteStore } from '../../src/store/sql/invites.js';
import { UserStore } from '../../src/store/sql/users.js';
import { sqlitePlans } from '../helpers/query-plans.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');

describeEachEngine('e-mail addresses stored decomposed', ({ handle }) => {
  const now = () => Date.UTC(2031, 0, 1);
  const ZOE = 'zoë.ångström@example.com';

  it('an account whose address was stored decomposed is found, and taken, by the address typed composed', async () => {
    const db = handle().db;
    const users = new UserStore(db, now);
    const first = (await users.create('first@example.com', 'h'))!;
    const id = newId('usr', now());
    await db.insertInto('users').values({ id, email: NFD(ZOE), password_hash: 'h', created_at: now(), updated_at: now(), is_admin: 0, disabled_at: null, deleted_at: null, admin_managed_by: null, link_offered_at: null, last_sign_in_at: null, quota_bytes: null }).execute();

    expect((await users.findByEmail(NFC(ZOE)))?.id).toBe(id);
    expect((await users.findByEmail(NFC('ZOë.ångström@EXAMPLE.com')))?.id).toBe(id);

    expect((await new FilterLookups(db).userIds([NFC(ZOE)]))).toEqual([id]);
    expect(await users.create(NFC(ZOE), 'h')).toBeNull();
    expect(await users.setEmail(first.id, NFC(ZOE))).toBe('conflict');
    // Its own address in the other spelling is no conflict: it is stored composed from then on.
    expect(await users.setEmail(id, NFC(ZOE))).toBe(true);
    expect((await users.findById(id))?.email).toBe(NFC(ZOE));
    // A new address typed decomposed is stored composed.
    expect((await users.create(NFD('lena.müller@example.com'), 'h'))?.email).toBe(NFC('lena.müller@example.com'));
  });

  it('an address or a group name is looked up in both spellings through its unique index, as in one was (SQLite): no scan of the table', async () => {
    const db = handle().db;
    const plans = await sqlitePlans(db, async (watched) => {
      await new UserStore(watched, now).findByEmail(NFC(ZOE));
      await new GroupStore(watched, now).findByName(NFC('Bücher'));
    });
    if (!plans) return; // PostgreSQL's planner weighs indexes by statistics: nothing to hold here
    expect(plans[0]!.join('\n')).toMatch(/^(?![\s\S]*SCAN users)[\s\S]*USING INDEX users_email/);
    expect(plans[1]!.join('\n')).toMatch(/^(?![\s\S]*SCAN g\b)[\s\S]*USING INDEX groups_name/);
  });

  it('two accounts made in the two spellings before are each found by their own', async () => {
    const db = handle().db;
    const users = new UserStore(db, now);
    const address = 'chloé@example.com';
    const ids: string[] = [];
    for (const spelled of [NFD, NFC]) {
      const id = newId('usr', now());
      ids.push(id);
      await db.insertInto('users').values({ id, email: spelled(address), password_hash: 'h', created_at: now(), updated_at: now(), is_admin: 0, disabled_at: null, deleted_at: null, admin_managed_by: null, link_offered_at: null, last_sign_in_at: null, quota_bytes: null }).execute();
    }
    expect((await users.findByEmail(NFD(address)))?.id).toBe(ids[0]);
    expect((await users.findByEmail(NFC(address)))?.id).toBe(ids[1]);
  });

  it('an invitation stored decomposed is replaced by one for the address composed; audit events are found by either', async () => {
    const db = handle().db;
    const invites = new InviteStore(db, now);
    const address = 'rené.dupré@example.com';
    await invites.create('a'.repeat(64), NFD(address), null, 60_000);
    await invites.create('b'.repeat(64), NFC(address), null, 60_000);
    expect((await invites.listOpen()).map((i) => i.email)).toEqual([NFC(address)]);

    const audit = new AuditEventStore(db);
    const event = { at: now(), type: 'account.signed_in', via: 'session', credential_id: null, target_type: 'account', target_id: 'usr_x', client_ip: null, user_agent: null, request_id: null, details: '{}' };
    await audit.append({ ...event, id: newId('aud', now()), actor_id: 'usr_x', actor_email: NFD(address), target_label: NFD(address) });
    for (const typed of [NFC, NFD]) {
      expect(await audit.list({ actorEmail: typed(address) }, 10), typed.name).toHaveLength(1);
      expect(await audit.list({ targetId: typed(address) }, 10), typed.name).toHaveLength(1);
    }
  });

  it("a key's name is stored composed", async () => {
    const db = handle().db;
    const user = (await new UserStore(db, now).create('keys@example.com', 'h'))!;
    const keys = new ApiKeyStore(db, now);
    const made = await keys.create({ userId: user.id, name: NFD('Schlüssel'), prefix: 'dsk_abcd', last4: 'wxyz', keyHash: 'c'.repeat(64), scopes: ['read:documents'] });
    expect(made.name).toBe(NFC('Schlüssel'));
    expect((await keys.listActive(user.id)).map((k) => k.name)).toEqual([NFC('Schlüssel')]);
  });
});
