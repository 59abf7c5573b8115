/**
 * Accounts and groups from an identity provider (docs/sso.md): who a sign-in through the provider (OpenID Connect,
 * or a trusted-header proxy) is here. Decided at every such sign-in:
 * - who may: a required group, and for a first sign-in the allowed e-mail domains (a verified e-mail only);
 * - which account: the one linked to the person's subject at the provider; else, at a first sign-in, a new account,
 *   or the local account with the same e-mail when the operator allows linking (every account, or this one: an offer
 *   that the link then uses up) and the provider vouches for the e-mail (`email_verified`) — never through an unverified one, which anybody could have typed at the provider;
 * - their groups: the provider's groups, made here as groups of its source (read-only in docsearch, so sharing can
 *   use them), joined and left to match the claim — losing a group there loses what it was given here at once;
 * - whether they are an admin, when an admin group is mapped: the flag is then the provider's (marked on the
 *   account, so that it is not changed here: team-admin.ts refuses).
 * A disabled account signs in to nothing: the provider cannot enable it. Every change a sign-in makes (an account
 * made or linked, a group made, joined or left, the admin flag set) is an audit event `by: sso`; a refused sign-in
 * is a `sign_in.failed` event.
 */
import { domainToASCII } from 'node:url';
import { validEmail } from '../auth/accounts.js';
import type { AuditEvent, AuditLog } from '../core/audit.js';
import { bytesProblem, unstorableProblem } from '../core/storable-text.js';
import type { ExternalIdentity } from '../auth/sso/identity.js';
import type { Group, GroupStore } from '../store/sql/groups.js';
import type { NewAccountStores } from '../store/sql/identities.js';
import type { User } from '../store/sql/users.js';
import { groupNameProblem } from './team-admin.js';
import { cutChars, cutUnits } from '../core/code-points.js';
import { MAX_EMAIL_CHARS } from '../core/name-limits.js';
import { lowerKey } from '../core/name-spellings.js';

export interface ProviderPolicy {
  /** The provider's name: the source its groups are marked with. */
  source: string;
  /** Domains, in any case, spelling or IDNA form (compared as DNS does); empty: any. */
  allowedDomains: readonly string[];
  requiredGroup: string | null;
  adminGroup: string | null;
  /** Whether a first sign-in may take over the local account with the same (verified) e-mail. */
  linkAccounts: boolean;
}

export interface ProviderAccountDeps extends NewAccountStores {
  /** Runs a first sign-in's writes (account, default project, link) as one transaction. */
  transaction<T>(fn: (stores: NewAccountStores) => Promise<T>): Promise<T>;
  groups: GroupStore;
  /** Something the operator should hear about (a group that could not be synced); never a secret. */
  warn: (message: string, fields: Record<string, unknown>) => void;
  audit: AuditLog;
}

export type ProviderSignIn =
  | { ok: true; user: User; created: boolean; linked: boolean }
  | { ok: false; reason: 'disabled' | 'not-allowed' | 'no-email' | 'taken'; message: string };

/** A setting's group and a claim's, in any case and either Unicode spelling (a setting may be pasted decomposed). */
const sameName = (a: string | null, b: string): boolean => a !== null && lowerKey(a) === lowerKey(b);

/**
 * A domain as DNS compares it: its ASCII form (IDNA: "café.example", "cafe\u0301.example", "CAFÉ.example" and
 * "xn--caf-dma.example" are one), as the provider may send either and the operator may type either.
 */
const domainKey = (domain: string): string => domainToASCII(domain) || lowerKey(domain);

export class ProviderAccounts {
  constructor(
    private readonly deps: ProviderAccountDeps,
    readonly policy: ProviderPolicy,
  ) {}

  /**
   * `recheck`: the provider asked again about a signed-in session (server/web/provider-session.ts). Its answer may
   * say nothing of groups where the sign-in's did (userinfo without the claim the ID token carried: Entra ID's never
   * has it): that silence leaves the groups, the admin flag and the required group as the last sign-in set them.
   */
  async signIn(identity: ExternalIdentity, opts: { recheck?: boolean } = {}): Promise<ProviderSignIn> {
    const unusable = subjectProblem(identity.subject);
    const outcome = unusable ? refused('not-allowed', `${this.policy.source} sent a subject (the sub claim) that ${unusable}: nobody can sign in with it here.`) : await this.decide(identity, identity.groups !== null || !opts.recheck);
    if (!outcome.ok) {
      const link = unusable ? null : await this.deps.identities.find(identity.provider, identity.subject);
      const user = link ? await this.deps.users.findById(link.userId) : null;
      await this.deps.audit.record({
        type: 'sign_in.failed',
        actor: user ? { id: user.id, email: user.email } : { id: null, email: null },
        details: { step: 'provider', reason: outcome.reason, provider: this.policy.source, subject: identity.subject, ...(identity.email ? { email: cutChars(identity.email, MAX_EMAIL_CHARS) } : {}) },
      });
    }
    return outcome;
  }

  private async decide(identity: ExternalIdentity, groupsSaid: boolean): Promise<ProviderSignIn> {
    const { requiredGroup, adminGroup, source } = this.policy;
    if (groupsSaid && requiredGroup && !identity.groups?.some((g) => sameName(requiredGroup, g))) {
      return refused('not-allowed', `Only members of the group “${requiredGroup}” at ${source} may sign in here.`);
    }
    const found = await this.account(identity);
    if (!found.ok) return found;
    const { user } = found;
    if (user.disabledAt !== null) return refused('disabled', 'This account is disabled. Ask an administrator of this docsearch to enable it.');
    const as = { id: user.id, email: user.email };
    const record = (event: AuditEvent) => this.deps.audit.record({ ...event, actor: as, by: 'sso' });
    const target = { type: 'account', id: user.id, label: user.email };
    if (found.created) await record({ type: 'account.created', target, details: { provider: source, subject: identity.subject } });
    if (found.linked) await record({ type: 'account.linked', target, details: { provider: source, subject: identity.subject } });
    await this.deps.identities.signedIn(identity.provider, identity.subject);
    if (groupsSaid) await this.syncGroups(user, identity.groups ?? [], record);
    const admin = adminGroup && groupsSaid ? (identity.groups ?? []).some((g) => sameName(adminGroup, g)) : user.isAdmin;
    if (admin !== user.isAdmin) {
      await this.deps.users.setAdmin(user.id, admin);
      await record({ type: 'account.admin_changed', target, details: { admin, provider: source, admin_group: adminGroup } });
    }
    const managedBy = adminGroup ? source : null;
    if (managedBy !== user.adminManagedBy) await this.deps.users.setAdminManagedBy(user.id, managedBy);
    return { ...found, user: { ...user, isAdmin: admin, adminManagedBy: managedBy } };
  }

  /**
   * Links a signed-in account to the person who just signed in at the provider (Settings → Security: both proofs
   * at once, the session here and the sign-in there). Refused when either is linked to someone else already.
   */
  async linkSignedIn(user: Pick<User, 'id' | 'email'>, identity: ExternalIdentity): Promise<{ ok: true; already: boolean } | { ok: false; message: string }> {
    const { source } = this.policy;
    const unusable = subjectProblem(identity.subject);
    if (unusable) return { ok: false, message: `${source} sent a subject (the sub claim) that ${unusable}: it cannot be linked here.` };
    const link = await this.deps.identities.find(identity.provider, identity.subject);
    if (link) return link.userId === user.id ? { ok: true, already: true } : { ok: false, message: `That ${source} account is linked to another account here: it was not linked to yours.` };
    if (await this.deps.identities.linked(user.id, identity.provider)) return { ok: false, message: `Your account is linked to another ${source} account already.` };
    if (!(await this.deps.identities.link(user.id, identity.provider, identity.subject))) return this.linkSignedIn(user, identity);
    await this.deps.audit.record({ type: 'account.linked', actor: { id: user.id, email: user.email }, by: 'user', target: { type: 'account', id: user.id, label: user.email }, details: { provider: source, subject: identity.subject, how: 'settings' } });
    return { ok: true, already: false };
  }

  /** Whether the account is linked at this provider (signing out of docsearch signs out there too). */
  linked(userId: string, provider: string): Promise<boolean> {
    return this.deps.identities.linked(userId, provider);
  }

  /** The account linked to the identity; at a first sign-in, the one made or linked for it, or why not. */
  private async account(identity: ExternalIdentity): Promise<ProviderSignIn> {
    const link = await this.deps.identities.find(identity.provider, identity.subject);
    if (link) {
      const user = await this.deps.users.findById(link.userId);
      if (user) return { ok: true, user, created: false, linked: false };
      // Its account was deleted: the person is new again.
      await this.deps.identities.unlink(identity.provider, identity.subject);
    }
    if (!identity.email) return refused('no-email', `${this.policy.source} did not say what this person's e-mail is: it must send the email claim (the email scope).`);
    let email: string;
    try {
      email = validEmail(identity.email, { vouched: true });
    } catch {
      return refused('no-email', `${this.policy.source} sent “${identity.email}”, which is not an e-mail address.`);
    }
    if (this.policy.allowedDomains.length > 0) {
      const domain = domainKey(email.slice(email.lastIndexOf('@') + 1));
      if (!identity.emailVerified || !this.policy.allowedDomains.some((allowed) => domainKey(allowed) === domain)) {
        return refused('not-allowed', `Accounts here are for verified e-mail addresses at ${this.policy.allowedDomains.join(', ')}.`);
      }
    }
    const existing = await this.deps.users.findByEmail(email);
    if (existing) {
      // A sign-in of the same person at the same moment may have made this account, and linked it in the same
      // transaction, since the lookup above: then it is theirs, not one to refuse as taken.
      if (await this.deps.identities.find(identity.provider, identity.subject)) return this.account(identity);
      // Linking is the operator's choice for every account (--sso-link-accounts), or for this one (`users allow-sso-link`).
      const offered = this.policy.linkAccounts || (await this.deps.users.providerLinkOffered(existing.id)) !== null;
      if (!offered || !identity.emailVerified || (await this.deps.identities.linked(existing.id, identity.provider))) {
        return refused('taken', `An account with the e-mail ${email} exists here already, and signing in through ${this.policy.source} may not take it over. Sign in with its password, or ask an administrator.`);
      }
      if (!(await this.deps.identities.link(existing.id, identity.provider, identity.subject))) return this.account(identity);
      await this.deps.users.offerProviderLink(existing.id, null);
      const { passwordHash: _, ...user } = existing;
      return { ok: true, user, created: false, linked: true };
    }
    const user = await this.deps.transaction(async ({ users, projects, identities }) => {
      // No password: '!' is a hash nothing matches (as a deleted account's). The first account of a library is its admin.
      const made = await users.create(email, '!');
      if (!made) return null;
      await projects.ensureDefault(made.id);
      if (!(await identities.link(made.id, identity.provider, identity.subject))) throw new LinkedMeanwhile();
      return made;
    }).catch((err: unknown) => (err instanceof LinkedMeanwhile ? null : Promise.reject(err)));
    // Null: the e-mail was taken, or the subject linked, by a sign-in at the same moment: decide again from what it made.
    if (!user) return this.account(identity);
    return { ok: true, user, created: true, linked: false };
  }

  /** Joins the provider's groups named in the claim and leaves the others of its source; local groups stay as they are. */
  private async syncGroups(user: User, names: readonly string[], record: (event: AuditEvent) => Promise<void>): Promise<void> {
    const wanted = new Map<string, Group>();
    for (const raw of names) {
      const name = raw.trim();
      const problem = groupNameProblem(name);
      if (problem) {
        this.deps.warn('a group from the identity provider was not synced: its name is not one docsearch takes', { group: cutUnits(raw, 200), problem });
        continue;
      }
      const group = await this.providerGroup(name, record);
      if (group) wanted.set(group.id, group);
    }
    const groupTarget = (g: Group) => ({ type: 'group', id: g.id, label: g.name });
    const member = { user: user.id, email: user.email, provider: this.policy.source };
    const current = (await this.deps.groups.groupsOf(user.id)).filter((g) => g.source === this.policy.source);
    for (const g of current) {
      if (!wanted.has(g.id) && (await this.deps.groups.removeMember(g.id, user.id))) await record({ type: 'group.member_removed', target: groupTarget(g), details: member });
    }
    for (const g of wanted.values()) {
      if (await this.deps.groups.addMember(g.id, user.id)) await record({ type: 'group.member_added', target: groupTarget(g), details: member });
    }
  }

  /** The provider's group of this name, made when new; null when a group of another source has the name. */
  private async providerGroup(name: string, record: (event: AuditEvent) => Promise<void>): Promise<Group | null> {
    let group = await this.deps.groups.findByName(name);
    if (!group) {
      group = await this.deps.groups.create(name, '', this.policy.source);
      if (group) await record({ type: 'group.created', target: { type: 'group', id: group.id, label: group.name }, details: { provider: this.policy.source } });
      else group = await this.deps.groups.findByName(name);
    }
    if (group && group.source === this.policy.source) return group;
    this.deps.warn('a group from the identity provider was not synced: a group of another source has its name', { group: name, source: group?.source ?? null });
    return null;
  }
}

/** Rolls a new account back: its subject was linked to another account while it was being made. */
class LinkedMeanwhile extends Error {}

/**
 * What a provider's subject may be at most: the (provider, subject) indexes of links and sessions hold ~2,704 bytes
 * on PostgreSQL (OpenID Connect's subjects are 255 ASCII characters at most).
 */
const MAX_SUBJECT_BYTES = 1024;

/** Why a subject cannot key a link here (PostgreSQL could neither store nor index it, SQLite could), or undefined. */
const subjectProblem = (subject: string): string | undefined => unstorableProblem(subject) ?? bytesProblem(subject, MAX_SUBJECT_BYTES);

function refused(reason: Exclude<ProviderSignIn, { ok: true }>['reason'], message: string): ProviderSignIn {
  return { ok: false, reason, message };
}
