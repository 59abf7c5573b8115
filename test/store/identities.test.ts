/**
 * Accounts from an identity provider on both engines (src/access/provider-accounts.ts over the identities table,
 * migration 017): the links, concurrent first sign-ins of one person, provider groups beside local ones of the same
 * name, names docsearch does not take; and every table the migrations make is one that migrate, backup and restore
 * carry (LIBRARY_TABLES).
 */
import { expect, it } from 'vitest';
import { type ProviderPolicy, ProviderAccounts } from '../../src/access/provider-accounts.js';
import type { ExternalIdentity } from '../../src/auth/sso/identity.js';
import { GroupStore } from '../../src/store/sql/groups.js';
import { openNewAccountStores } from '../../src/store/sql/identities.js';
import { LIBRARY_TABLES } from '../../src/store/sql/library-copy.js';
import { RecordedAudit } from '../helpers/audit.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const now = () => Date.UTC(2026, 11, 1);
const ISSUER = 'https://sso.example.org/realms/acme';
const POLICY: ProviderPolicy = { source: 'Acme SSO', allowedDomains: [], requiredGroup: null, adminGroup: null, linkAccounts: false };

const person = (subject: string, groups: string[] | null = []): ExternalIdentity => ({ provider: ISSUER, subject, email: `${subject}@example.org`, emailVerified: true, groups });

describeEachEngine('identities and accounts from a provider', (suite) => {
  const open = (warnings: unknown[] = []) => {
    const { db } = suite.handle();
    const stores = { ...openNewAccountStores(db, now), groups: new GroupStore(db, now) };
    return { ...stores, accounts: new ProviderAccounts({ ...stores, warn: (message, fields) => warnings.push({ message, ...fields }), audit: new RecordedAudit() }, POLICY) };
  };

  it('links one subject of a provider to one account', async () => {
    const { users, identities } = open();
    const user = (await users.create('link@example.org', '!'))!;
    expect(await identities.link(user.id, ISSUER, 'sub-1')).toBe(true);
    expect(await identities.link(user.id, ISSUER, 'sub-1')).toBe(false);
    expect(await identities.find(ISSUER, 'sub-1')).toMatchObject({ userId: user.id, provider: ISSUER, subject: 'sub-1' });
    expect(await identities.find('https://other.example', 'sub-1')).toBeNull();
    expect(await identities.linked(user.id, ISSUER)).toBe(true);
    expect(await identities.linked(user.id, 'trusted-header')).toBe(false);
    await identities.unlink(ISSUER, 'sub-1');
    expect(await identities.find(ISSUER, 'sub-1')).toBeNull();
  });

  it('first sign-ins of one person at the same moment make one account', async () => {
    const { accounts, users } = open();
    // Several rounds: a sign-in that meets the account another one just made (and linked) must take it, not refuse
    // it as "taken" — a race that one round of six met about every other run on PostgreSQL.
    for (const name of ['rush', 'rhea', 'rory', 'ruth', 'reed']) {
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => accounts.signIn(person(name, ['crew']))));
      expect(outcomes.filter((o) => !o.ok)).toEqual([]);
      const ids = new Set(outcomes.map((o) => (o.ok ? o.user.id : null)));
      expect(ids.size).toBe(1);
      expect(outcomes.filter((o) => o.ok && o.created)).toHaveLength(1);
      expect((await users.list()).filter((u) => u.email === `${name}@example.org`)).toHaveLength(1);
    }
  });

  it("leaves a local group of the same name alone, and skips names docsearch does not take, saying so", async () => {
    const warnings: { message: string; group: string }[] = [];
    const { accounts, groups } = open(warnings as unknown[]);
    const finance = (await groups.create('finance'))!;
    const outcome = await accounts.signIn(person('fay', ['Finance', '/engineering/backend', 'support']));
    expect(outcome.ok).toBe(true);
    const user = outcome.ok ? outcome.user : null;
    const mine = await groups.groupsOf(user!.id);
    expect(mine.map((g) => [g.name, g.source])).toEqual([['support', 'Acme SSO']]);
    expect(await groups.members(finance.id)).toEqual([]);
    expect(warnings.map((w) => w.group).sort()).toEqual(['/engineering/backend', 'Finance']);
    // Leaving every group at the provider leaves every one of its groups here; local memberships stay.
    await groups.addMember(finance.id, user!.id);
    expect((await accounts.signIn(person('fay', null))).ok).toBe(true);
    expect((await groups.groupsOf(user!.id)).map((g) => g.name)).toEqual(['finance']);
  });

  it('every table the migrations make is carried by migrate, backup and restore', async () => {
    const { db } = suite.handle();
    const tables = (await db.introspection.getTables()).map((t) => t.name).filter((name) => !name.startsWith('kysely_'));
    expect(tables.filter((name) => !LIBRARY_TABLES.some((t) => t.name === name))).toEqual([]);
    expect(tables).toContain('identities');
  });
});
