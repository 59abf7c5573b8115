/**
 * What admins do to accounts and groups (the Admin pages, and the operator's `docsearch users` and `docsearch
 * groups` on the server machine): list, invite, disable, enable, delete (handing their projects to someone else),
 * make or unmake admins; make groups and change who is in them.
 *
 * Offboarding ends everything at once: disabling or deleting an account deletes its web sessions and revokes its
 * API keys and OAuth grants in the database every replica reads, and the credential lookups refuse a disabled
 * account's leftovers besides (auth/, store/sql/). Nothing another person owns is lost: a deleted account's
 * uploads stay in the projects they were uploaded to, and its own projects go to the account named, or the delete
 * is refused while they hold anything.
 */
import { type AccountService, validEmail } from '../auth/accounts.js';
import { checkPasswordStrength, hashPassword } from '../auth/password.js';
import type { Mailer } from '../mail/mailer.js';
import { inviteMail, passwordResetMail } from '../mail/messages.js';
import type { AccountOverview, AccountOverviewStore, Usage } from '../store/sql/account-overview.js';
import type { QuotaStore } from '../store/sql/quotas.js';
import type { PasswordResetStore } from '../store/sql/password-resets.js';
import type { AuditLog } from '../core/audit.js';
import { codePointCount, cutChars } from '../core/code-points.js';
import { conflict, invalidRequest, isAppError, notFound } from '../core/errors.js';
import { MAX_DESCRIPTION_CHARS, MAX_EMAIL_CHARS, MAX_INVITES, MAX_NAME_CHARS } from '../core/name-limits.js';
import { lowerKey } from '../core/name-spellings.js';
import type { Clock } from '../core/clock.js';
import { randomUrlToken, sha256Hex } from '../core/secrets.js';
import { unsafeTextProblem } from '../core/unsafe-text.js';
import type { ApiKeyStore } from '../store/sql/api-keys.js';
import { type Group, type GroupStore, LOCAL_GROUPS } from '../store/sql/groups.js';
import type { InviteStore, OpenInvite } from '../store/sql/invites.js';
import type { OAuthTokenStore } from '../store/sql/oauth-tokens.js';
import type { ProjectMemberStore, Role } from '../store/sql/project-members.js';
import type { Project, ProjectStore } from '../store/sql/projects.js';
import type { SavedSearchStore } from '../store/sql/saved-searches.js';
import type { SessionStore } from '../store/sql/sessions.js';
import { LAST_ADMIN, type User, type UserStore } from '../store/sql/users.js';

/** How long an invitation link works. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;
/** How long a password reset link someone asked for works ("Forgot password?"): long enough to read the mail. */
export const RESET_TTL_MS = 3600_000;
/** How long a reset link an admin made works: they hand it over themselves, perhaps not at once. */
export const ADMIN_RESET_TTL_MS = 24 * 3600_000;
/** "Forgot password?" mails an account at most once in this long (no mailbox flooding through the form). */
const RESET_ASK_GAP_MS = 60_000;
/** What an invitation or reset link became: its token (for a link to show once), and whether it went out by mail. */
export interface Issued {
  id: string;
  token: string;
  expiresAt: number;
  mailed: boolean;
}

/** One address of a bulk invitation: made (with its link) or refused (with why). */
export type InviteOutcome = { email: string; ok: true; issued: Issued } | { email: string; ok: false; error: string };

export interface TeamAdminDeps {
  users: UserStore;
  groups: GroupStore;
  members: Pick<ProjectMemberStore, 'removeEverywhere' | 'list' | 'remove' | 'countFor' | 'sharedWith'>;
  projects: Pick<ProjectStore, 'ownedBy' | 'get' | 'setOwner' | 'update' | 'delete' | 'withTrash'>;
  apiKeys: Pick<ApiKeyStore, 'revokeAllOf'>;
  sessions: Pick<SessionStore, 'deleteForUser'>;
  tokens: Pick<OAuthTokenStore, 'revokeAllOfUser'>;
  savedSearches: Pick<SavedSearchStore, 'deleteAllOf'>;
  invites: InviteStore;
  resets: PasswordResetStore;
  overview: AccountOverviewStore;
  /** Admins' quotas on accounts and projects (documents/quotas.ts checks them at upload). */
  quotas: QuotaStore;
  /** Mails invitations and reset links when the daemon has a mail server (absent: operator commands, and the links are shown instead). */
  mailer?: Mailer;
  /** Makes the account an invitation is accepted with (the password rules, the default project). */
  accounts: Pick<AccountService, 'createUser'>;
  now: Clock;
  /** Where every change to accounts and groups is recorded (who: the request's or the operator's audit context). */
  audit: AuditLog;
}

const accountTarget = (user: Pick<User, 'id' | 'email'>) => ({ type: 'account', id: user.id, label: user.email });
const groupTarget = (group: Pick<Group, 'id' | 'name'>) => ({ type: 'group', id: group.id, label: group.name });

/** What disabling or deleting ended. */
export interface Ended {
  sessions: number;
  keys: number;
  grants: number;
}

const lastAdmin = () => conflict('this is the only active admin: make another account an admin first');

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** "ended 2 web sessions, revoked 1 API key and 1 connected app": what an offboarding ended, for people. */
export const endedSummary = (e: Ended): string => `ended ${count(e.sessions, 'web session')}, revoked ${count(e.keys, 'API key')} and ${count(e.grants, 'connected app')}`;

/** What is wrong with a group's name (a local group's, or one a provider sends), or null. */
/** Characters counted as code points (the `u` flag), as the API counts them. */
const GROUP_NAME = new RegExp(`^[^\\s:/][^:/]{0,${MAX_NAME_CHARS - 1}}$`, 'u');

export function groupNameProblem(name: string): string | null {
  if (!GROUP_NAME.test(name)) return `a group name is 1–${MAX_NAME_CHARS} characters, without ":" or "/", and does not start with a space`;
  const unsafe = unsafeTextProblem(name);
  return unsafe ? `a group's name ${unsafe}` : null;
}

export class TeamAdmin {
  constructor(private readonly deps: TeamAdminDeps) {}

  listUsers(): Promise<User[]> {
    return this.deps.users.list();
  }

  async user(email: string): Promise<User> {
    const user = await this.deps.users.findByEmail(email.trim());
    if (!user) throw notFound(`account ${email.trim()}`);
    const { passwordHash: _, ...plain } = user;
    return plain;
  }

  async userById(id: string): Promise<User> {
    const user = await this.deps.users.findById(id);
    if (!user) throw notFound('account');
    return user;
  }

  /** An admin's own account is kept from what would lock them out: disabling or deleting it is for another admin. */
  notOnYourself(admin: Pick<User, 'id'>, target: Pick<User, 'id'>, what: string): void {
    if (admin.id === target.id) throw invalidRequest(`you cannot ${what} your own account: another admin can`);
  }

  /** Stops an account signing in to anything, and ends what it had open. The last admin stays. */
  async disable(user: User): Promise<Ended> {
    if ((await this.deps.users.setDisabled(user.id, this.deps.now(), { keepAnAdmin: true })) === LAST_ADMIN) throw lastAdmin();
    const ended = await this.endCredentials(user.id);
    await this.deps.audit.record({ type: 'account.disabled', target: accountTarget(user), details: { ...ended } });
    return ended;
  }

  async enable(user: User): Promise<void> {
    await this.deps.users.setDisabled(user.id, null);
    await this.deps.audit.record({ type: 'account.enabled', target: accountTarget(user) });
  }

  /** An account's own quota in bytes, or null: the default (`--quota-default`). */
  async setUserQuota(user: User, bytes: number | null): Promise<void> {
    await this.deps.quotas.setUser(user.id, bytes);
    await this.deps.audit.record({ type: 'account.quota_set', target: accountTarget(user), details: { quota_bytes: bytes } });
  }

  /** Own quotas of these accounts (null: the default applies). */
  userQuotas(users: readonly User[]): Promise<Map<string, number | null>> {
    return this.deps.quotas.userQuotas(users.map((u) => u.id));
  }

  /** A project's quota in bytes, or null: none. */
  async setProjectQuota(project: { id: string; name: string }, bytes: number | null): Promise<void> {
    await this.deps.quotas.setProject(project.id, bytes);
    await this.deps.audit.record({ type: 'project.quota_set', target: { type: 'project', id: project.id, label: project.name }, details: { quota_bytes: bytes } });
  }

  /** A project's quota and what its live documents hold (the admin API). */
  async projectUsage(projectId: string): Promise<{ quotaBytes: number | null; usage: Usage }> {
    const [quotaBytes, usage] = await Promise.all([this.deps.quotas.projectQuota(projectId), this.deps.overview.usageOf('project_id', [projectId])]);
    return { quotaBytes, usage: usage.get(projectId) ?? { documents: 0, bytes: 0, chunks: 0 } };
  }

  /**
   * Lets the identity provider take this local account over at its next sign-in with the same verified e-mail (the
   * per-account form of --sso-link-accounts); the person keeps their password, and their own factors are still asked.
   */
  async allowProviderLink(user: User): Promise<void> {
    await this.deps.users.offerProviderLink(user.id, this.deps.now());
    await this.deps.audit.record({ type: 'account.link_offered', target: accountTarget(user), details: {} });
  }

  async setAdmin(user: User, admin: boolean): Promise<void> {
    // The provider sets it again at the next sign-in: a change here would be undone silently (issue 61).
    if (user.adminManagedBy !== null) {
      throw conflict(`${user.email} is ${user.isAdmin ? '' : 'not '}an admin through ${user.adminManagedBy}'s admin group, which sets this at every sign-in: change their groups at ${user.adminManagedBy}`);
    }
    if ((await this.deps.users.setAdmin(user.id, admin, { keepAnAdmin: true })) === LAST_ADMIN) throw lastAdmin();
    await this.deps.audit.record({ type: 'account.admin_changed', target: accountTarget(user), details: { admin } });
  }

  /**
   * Deletes an account. Its own projects that hold anything (documents, or other members) go to `transferTo`, who
   * becomes their owner of record (a name they already use gets " (from <e-mail>)"); without one, the delete is
   * refused while there are such projects. Empty, unshared ones go with the account. What it uploaded into other
   * people's projects stays where it is.
   */
  async delete(user: User, transferTo?: User): Promise<Ended & { transferred: number; removed: number }> {
    if (transferTo?.id === user.id) throw invalidRequest('an account cannot transfer its projects to itself');
    if (transferTo && transferTo.disabledAt !== null) throw conflict(`${transferTo.email} is disabled: transfer to an active account`);
    // Unmade admin first, where the rule that one stays is kept (a deleted account is no admin): two admins deleting
    // each other at once leave one. A delete refused later on makes it an admin again.
    if (user.isAdmin && (await this.deps.users.setAdmin(user.id, false, { keepAnAdmin: true })) === LAST_ADMIN) throw lastAdmin();
    try {
      return await this.deleteAccount(user, transferTo);
    } catch (err) {
      if (user.isAdmin) await this.deps.users.setAdmin(user.id, true);
      throw err;
    }
  }

  private async deleteAccount(user: User, transferTo: User | undefined): Promise<Ended & { transferred: number; removed: number }> {
    const owned = await this.ownedProjects(user);
    const holding = await this.holding(owned);
    if (!transferTo && holding.length > 0) {
      throw conflict(`${user.email} owns ${holding.length} project${holding.length === 1 ? '' : 's'} with documents or members (${holding.map((p) => p.name).join(', ')}): transfer them to another account`, {
        projects: holding.map((p) => ({ id: p.id, name: p.name })),
      });
    }
    let transferred = 0;
    let removed = 0;
    for (const p of owned) {
      if (!holding.includes(p)) {
        await this.deps.projects.delete(p.id);
        removed++;
        continue;
      }
      let moved = await this.deps.projects.setOwner(p.id, transferTo!.id, user.id);
      if (moved === 'conflict') {
        // Cut whole characters, the project's name rather than whose it was: a split emoji is no storable text.
        const from = ` (from ${user.email})`;
        const renamed = cutChars(`${cutChars(p.name, Math.max(1, MAX_NAME_CHARS - codePointCount(from)))}${from}`, MAX_NAME_CHARS);
        await this.deps.projects.update(p.id, { name: renamed });
        moved = await this.deps.projects.setOwner(p.id, transferTo!.id, user.id);
        // Both names taken: stop with the account still there, rather than leave the project to a deleted one, and
        // its project named as it was.
        if (moved === 'conflict') {
          await this.deps.projects.update(p.id, { name: p.name });
          throw conflict(`${transferTo!.email} already has projects named "${p.name}" and "${renamed}": rename one of them, then delete again`);
        }
      }
      // Given to someone else meanwhile (by another of its owners): no longer this account's to hand on.
      if (!moved) continue;
      await this.deps.members.remove(p.id, transferTo!.id); // an owner of record needs no row of their own
      transferred++;
    }
    const ended = await this.endCredentials(user.id);
    await this.deps.members.removeEverywhere(user.id);
    await this.deps.groups.leaveAll(user.id);
    // The tombstone keeps the row, so nothing cascades: a deleted person's saved searches (their words, shared ones
    // before a project's members under a deleted account) go with them.
    await this.deps.savedSearches.deleteAllOf(user.id);
    await this.deps.users.tombstone(user.id);
    await this.deps.audit.record({ type: 'account.deleted', target: accountTarget(user), details: { ...ended, transferred, removed, transferred_to: transferTo?.email ?? null } });
    return { ...ended, transferred, removed };
  }

  /** The account's projects that a delete hands over (they hold documents, in their trash too, or others were given a role on them). */
  async projectsToHandOver(user: User): Promise<Project[]> {
    return this.holding(await this.ownedProjects(user));
  }

  /** Those of `projects` (an account's own, from ownedProjects) that a delete hands over. */
  async holding(projects: Project[]): Promise<Project[]> {
    const members = await Promise.all(projects.map((p) => this.deps.members.list(p.id)));
    // Its trash counts too (documentCount leaves it out): deleted with the account, it would be gone before its retention.
    const trashed = await this.deps.projects.withTrash(projects.map((p) => p.id));
    return projects.filter((p, i) => p.documentCount > 0 || trashed.has(p.id) || members[i]!.length > 0);
  }

  /** The projects an account owns of record, with their counts (what a delete hands on, or removes when empty). */
  async ownedProjects(user: User): Promise<Project[]> {
    const counted = await Promise.all((await this.deps.projects.ownedBy(user.id)).map((p) => this.deps.projects.get(p.id)));
    return counted.filter((p): p is Project => p !== null);
  }

  private async endCredentials(userId: string): Promise<Ended> {
    const now = this.deps.now();
    const [sessions, keys, grants] = await Promise.all([this.deps.sessions.deleteForUser(userId), this.deps.apiKeys.revokeAllOf(userId), this.deps.tokens.revokeAllOfUser(userId, now)]);
    return { sessions, keys, grants };
  }

  /**
   * A one-time invitation link for a new account with this address (shown once; only its hash is kept), with what the
   * account gets: admin, or a local group. With `send` and a mail server, the link is mailed, queued in the same
   * transaction that records it. `by` is the admin (null: the operator).
   */
  async invite(email: string, by: Pick<User, 'id' | 'email'> | null, opts: { admin?: boolean; group?: Group | null; send?: boolean } = {}): Promise<Issued> {
    const unsafe = unsafeTextProblem(email.trim());
    if (unsafe) throw invalidRequest(`an email address ${unsafe}`);
    const address = validEmail(email);
    if (await this.deps.users.findByEmail(address)) throw conflict(`an account with the e-mail ${address} exists already`);
    if (opts.group) this.local(opts.group);
    const token = randomUrlToken(32);
    const mailer = opts.send ? this.deps.mailer : undefined;
    let mailed = false;
    const { id, expiresAt } = await this.deps.invites.create(sha256Hex(token), address, by?.id ?? null, INVITE_TTL_MS, { admin: opts.admin ?? false, groupId: opts.group?.id ?? null }, async (trx, until) => {
      if (!mailer?.enabled) return;
      const publicUrl = mailer.link('');
      mailed = (await mailer.queue(trx, inviteMail({ to: address, link: mailer.link(`/invite?token=${token}`), publicUrl, by: by?.email ?? null, expiresAt: until, admin: opts.admin ?? false, group: opts.group?.name ?? null }))) !== null;
    });
    if (mailed) mailer!.wake();
    await this.deps.audit.record({ type: 'account.invited', target: { type: 'invitation', id, label: address }, details: { email: address, admin: opts.admin ?? false, group: opts.group?.name ?? null, mailed } });
    return { id, token, expiresAt, mailed };
  }

  /** Invitations for many addresses at once (one per line, or separated by commas or spaces); each is made or refused on its own. */
  async inviteMany(emails: readonly string[], by: Pick<User, 'id' | 'email'> | null, opts: { admin?: boolean; group?: Group | null; send?: boolean } = {}): Promise<InviteOutcome[]> {
    const unique = [...new Map(emails.map((e) => e.trim()).filter(Boolean).map((e) => [lowerKey(e), e])).values()];
    if (unique.length === 0) throw invalidRequest('give at least one e-mail address');
    if (unique.length > MAX_INVITES) throw invalidRequest(`at most ${MAX_INVITES} addresses at once (got ${unique.length})`);
    const out: InviteOutcome[] = [];
    for (const email of unique) {
      try {
        out.push({ email, ok: true, issued: await this.invite(email, by, opts) });
      } catch (err) {
        if (!isAppError(err) || err.status >= 500) throw err;
        out.push({ email, ok: false, error: err.message });
      }
    }
    return out;
  }

  /** Invitations not yet used or expired, with who made them (never their links: those were shown once). */
  openInvites(): Promise<OpenInvite[]> {
    return this.deps.invites.listOpen();
  }

  /** Revokes an open invitation: its link stops working at once. */
  async revokeInvite(id: string): Promise<string> {
    const email = await this.deps.invites.revoke(id);
    if (email === null) throw notFound('open invitation');
    await this.deps.audit.record({ type: 'account.invite_revoked', target: { type: 'invitation', id, label: email }, details: { email } });
    return email;
  }

  /** The address an invitation link is for while it works (unused, unexpired); null otherwise. */
  invitation(token: string): Promise<string | null> {
    return token ? this.deps.invites.emailFor(sha256Hex(token)) : Promise.resolve(null);
  }

  /**
   * Accepts an invitation: makes its account with this password, for the one caller whose use of the link wins, and
   * gives it what the invitation said (admin, a group). The password is checked first, so a weak one does not use
   * the link up. Null for a used, expired or unknown link.
   */
  async acceptInvite(token: string, password: string): Promise<User | null> {
    const weak = checkPasswordStrength(password);
    if (weak) throw invalidRequest(weak);
    const invite = token ? await this.deps.invites.consume(sha256Hex(token)) : null;
    if (invite === null) return null;
    const user = await this.deps.accounts.createUser(invite.email, password);
    if (invite.admin && !user.isAdmin) await this.deps.users.setAdmin(user.id, true);
    const group = invite.groupId ? await this.deps.groups.get(invite.groupId) : null;
    if (group) await this.deps.groups.addMember(group.id, user.id);
    await this.deps.audit.record({ type: 'account.created', target: accountTarget(user), actor: { id: user.id, email: user.email }, details: { how: 'invitation', admin: invite.admin, group: group?.name ?? null } });
    return { ...user, isAdmin: user.isAdmin || invite.admin };
  }

  /**
   * A one-time link that sets a new password for the account (an admin's "send a reset link"; `by` null: the
   * operator). With `send` and a mail server it is mailed to the account, queued in the transaction that records it;
   * otherwise its token is for the admin to hand over (shown once).
   */
  async resetLink(user: User, by: Pick<User, 'id' | 'email'> | null, opts: { send?: boolean } = {}): Promise<Issued> {
    if (user.disabledAt !== null) throw conflict(`${user.email} is disabled: enable the account first`);
    const mailer = opts.send ? this.deps.mailer : undefined;
    const issued = (await this.issueReset(user, by?.id ?? null, ADMIN_RESET_TTL_MS, mailer, true))!;
    await this.deps.audit.record({ type: 'password_reset.link_made', target: accountTarget(user), details: { mailed: issued.mailed, expires_at: new Date(issued.expiresAt).toISOString() } });
    return issued;
  }

  /**
   * "Forgot password?": mails a reset link to the account with this address, if there is one that may sign in with a
   * password, and at most once a minute. Says nothing either way (the page answers the same for any address), so the
   * form does not tell who has an account. False when no mail server is configured.
   */
  async forgotPassword(email: string): Promise<boolean> {
    const mailer = this.deps.mailer;
    if (!mailer?.enabled) return false;
    const user = await this.deps.users.findByEmail(cutChars(email.trim(), MAX_EMAIL_CHARS));
    if (!user || user.disabledAt !== null) return true;
    const { passwordHash: _, ...plain } = user;
    const issued = await this.issueReset(plain, null, RESET_TTL_MS, mailer, false);
    if (!issued) return true;
    await this.deps.audit.record({ type: 'password_reset.requested', target: accountTarget(user), actor: { id: null, email: null }, details: { mailed: issued.mailed } });
    return true;
  }

  /** A reset link made (and mailed, with a mailer); null when the person asked for one within RESET_ASK_GAP_MS (`byAdmin` false). */
  private async issueReset(user: User, by: string | null, ttlMs: number, mailer: Mailer | undefined, byAdmin: boolean): Promise<Issued | null> {
    const token = randomUrlToken(32);
    let mailed = false;
    const expiresAt = await this.deps.resets.create(
      sha256Hex(token),
      user.id,
      by,
      ttlMs,
      async (trx, until) => {
        if (!mailer?.enabled) return;
        mailed = (await mailer.queue(trx, passwordResetMail({ to: user.email, link: mailer.link(`/reset-password?token=${token}`), publicUrl: mailer.link(''), byAdmin, expiresAt: until }))) !== null;
      },
      byAdmin ? {} : { askedGapMs: RESET_ASK_GAP_MS },
    );
    if (expiresAt === null) return null;
    if (mailed) mailer!.wake();
    return { id: sha256Hex(token).slice(0, 16), token, expiresAt, mailed };
  }

  /** The account a reset link is for while it works (unused, unexpired, the account active); null otherwise. */
  async resetFor(token: string): Promise<User | null> {
    const id = token ? await this.deps.resets.userFor(sha256Hex(token)) : null;
    const user = id ? await this.deps.users.findById(id) : null;
    return user && user.disabledAt === null ? user : null;
  }

  /**
   * Uses a reset link: sets the password, once, for the one caller whose use wins, and signs the account out of every
   * browser (its web sessions end). A weak password is refused before the link is used up. Null for a used, expired
   * or unknown link, or a disabled account.
   */
  async completeReset(token: string, password: string): Promise<{ user: User; sessionsEnded: number } | null> {
    const weak = checkPasswordStrength(password);
    if (weak) throw invalidRequest(weak);
    if (!(await this.resetFor(token))) return null;
    const userId = await this.deps.resets.consume(sha256Hex(token));
    const user = userId ? await this.deps.users.findById(userId) : null;
    if (!user || user.disabledAt !== null) return null;
    await this.deps.users.setPasswordHash(user.id, await hashPassword(password));
    const sessionsEnded = await this.deps.sessions.deleteForUser(user.id);
    await this.deps.audit.record({ type: 'password_reset.completed', target: accountTarget(user), actor: { id: user.id, email: user.email }, details: { sessions_ended: sessionsEnded } });
    return { user, sessionsEnded };
  }

  /** Last sign-in, local or provider, second factors and usage of each account (Admin → Users, the admin API). */
  async overview(users: readonly User[]): Promise<Map<string, AccountOverview>> {
    return this.deps.overview.all(users.map((u) => u.id));
  }

  listGroups(): Promise<Group[]> {
    return this.deps.groups.list();
  }

  async group(name: string): Promise<Group> {
    const group = await this.deps.groups.findByName(name.trim());
    if (!group) throw notFound(`group "${name.trim()}"`);
    return group;
  }

  async groupById(id: string): Promise<Group> {
    const group = await this.deps.groups.get(id);
    if (!group) throw notFound('group');
    return group;
  }

  async createGroup(name: string, description = ''): Promise<Group> {
    const trimmed = name.trim();
    const problem = groupNameProblem(trimmed);
    if (problem) throw invalidRequest(problem);
    const unsafe = unsafeTextProblem(description.trim());
    if (unsafe) throw invalidRequest(`a group's description ${unsafe}`);
    if (codePointCount(description.trim()) > MAX_DESCRIPTION_CHARS) throw invalidRequest(`a group description is at most ${MAX_DESCRIPTION_CHARS.toLocaleString('en')} characters`);
    const group = await this.deps.groups.create(trimmed, description.trim());
    if (!group) throw conflict(`a group named "${trimmed}" exists already`);
    await this.deps.audit.record({ type: 'group.created', target: groupTarget(group) });
    return group;
  }

  /** What deleting `group` would take away, for the confirmation that asks first: its members, and the projects shared with it. */
  async groupReach(group: Group): Promise<{ members: number; projects: number }> {
    return { members: group.memberCount, projects: await this.deps.members.countFor(group.id) };
  }

  /** The projects shared with `group`, with the role each gave it and who owns it of record (a group's admin page). */
  groupProjects(group: Group): Promise<{ projectId: string; name: string; role: Role; ownerEmail: string | null }[]> {
    return this.deps.members.sharedWith(group.id);
  }

  /** Deletes a group: its members lose what it was given, and keep what they hold themselves. */
  async deleteGroup(group: Group): Promise<void> {
    this.local(group);
    await this.deps.members.removeEverywhere(group.id);
    await this.deps.groups.delete(group.id);
    await this.deps.audit.record({ type: 'group.deleted', target: groupTarget(group) });
  }

  async addToGroup(group: Group, user: User): Promise<boolean> {
    this.local(group);
    const added = await this.deps.groups.addMember(group.id, user.id);
    if (added) await this.deps.audit.record({ type: 'group.member_added', target: groupTarget(group), details: { user: user.id, email: user.email } });
    return added;
  }

  async removeFromGroup(group: Group, user: User): Promise<boolean> {
    this.local(group);
    const removed = await this.deps.groups.removeMember(group.id, user.id);
    if (removed) await this.deps.audit.record({ type: 'group.member_removed', target: groupTarget(group), details: { user: user.id, email: user.email } });
    return removed;
  }

  members(group: Group): Promise<{ id: string; email: string }[]> {
    return this.deps.groups.members(group.id);
  }

  /** An identity provider's groups are changed there: here they are read-only. */
  local(group: Group): void {
    // Not a right the admin lacks: the group is kept elsewhere (a conflict with where it lives, said on the page).
    if (group.source !== LOCAL_GROUPS) throw conflict(`the group "${group.name}" comes from ${group.source}: change its members there`);
  }
}
