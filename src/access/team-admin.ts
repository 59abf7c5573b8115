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
import type { AccountService } from '../auth/accounts.js';
import { checkPasswordStrength } from '../auth/password.js';
import type { AuditLog } from '../core/audit.js';
import { conflict, invalidRequest, notFound } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import { randomUrlToken, sha256Hex } from '../core/secrets.js';
import { unsafeTextProblem } from '../core/unsafe-text.js';
import type { ApiKeyStore } from '../store/sql/api-keys.js';
import { type Group, type GroupStore, LOCAL_GROUPS } from '../store/sql/groups.js';
import type { InviteStore } from '../store/sql/invites.js';
import type { OAuthTokenStore } from '../store/sql/oauth-tokens.js';
import type { ProjectMemberStore } from '../store/sql/project-members.js';
import type { Project, ProjectStore } from '../store/sql/projects.js';
import type { SessionStore } from '../store/sql/sessions.js';
import type { User, UserStore } from '../store/sql/users.js';

/** How long an invitation link works. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;

export interface TeamAdminDeps {
  users: UserStore;
  groups: GroupStore;
  members: Pick<ProjectMemberStore, 'removeEverywhere' | 'list' | 'remove'>;
  projects: Pick<ProjectStore, 'ownedBy' | 'get' | 'setOwner' | 'update' | 'delete'>;
  apiKeys: Pick<ApiKeyStore, 'revokeAllOf'>;
  sessions: Pick<SessionStore, 'deleteForUser'>;
  tokens: Pick<OAuthTokenStore, 'revokeAllOfUser'>;
  invites: InviteStore;
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

const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** "ended 2 web sessions, revoked 1 API key and 1 connected app": what an offboarding ended, for people. */
export const endedSummary = (e: Ended): string => `ended ${count(e.sessions, 'web session')}, revoked ${count(e.keys, 'API key')} and ${count(e.grants, 'connected app')}`;

/** What is wrong with a group's name (a local group's, or one a provider sends), or null. */
export function groupNameProblem(name: string): string | null {
  if (!/^[^\s:/][^:/]{0,99}$/u.test(name)) return 'a group name is 1–100 characters, without ":" or "/", and does not start with a space';
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

  /** Stops an account signing in to anything, and ends what it had open. The last admin stays. */
  async disable(user: User): Promise<Ended> {
    if (user.isAdmin && user.disabledAt === null) await this.keepAnAdmin();
    await this.deps.users.setDisabled(user.id, this.deps.now());
    const ended = await this.endCredentials(user.id);
    await this.deps.audit.record({ type: 'account.disabled', target: accountTarget(user), details: { ...ended } });
    return ended;
  }

  async enable(user: User): Promise<void> {
    await this.deps.users.setDisabled(user.id, null);
    await this.deps.audit.record({ type: 'account.enabled', target: accountTarget(user) });
  }

  async setAdmin(user: User, admin: boolean): Promise<void> {
    // The provider sets it again at the next sign-in: a change here would be undone silently (issue 61).
    if (user.adminManagedBy !== null) {
      throw conflict(`${user.email} is ${user.isAdmin ? '' : 'not '}an admin through ${user.adminManagedBy}'s admin group, which sets this at every sign-in: change their groups at ${user.adminManagedBy}`);
    }
    if (!admin && user.isAdmin) await this.keepAnAdmin();
    await this.deps.users.setAdmin(user.id, admin);
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
    if (user.isAdmin) await this.keepAnAdmin();
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
      if ((await this.deps.projects.setOwner(p.id, transferTo!.id)) === 'conflict') {
        const renamed = `${p.name} (from ${user.email})`.slice(0, 100);
        await this.deps.projects.update(p.id, { name: renamed });
        // Both names taken: stop with the account still there, rather than leave the project to a deleted one.
        if ((await this.deps.projects.setOwner(p.id, transferTo!.id)) === 'conflict') {
          throw conflict(`${transferTo!.email} already has projects named "${p.name}" and "${renamed}": rename one of them, then delete again`);
        }
      }
      await this.deps.members.remove(p.id, transferTo!.id); // an owner of record needs no row of their own
      transferred++;
    }
    const ended = await this.endCredentials(user.id);
    await this.deps.members.removeEverywhere(user.id);
    await this.deps.groups.leaveAll(user.id);
    await this.deps.users.tombstone(user.id);
    await this.deps.audit.record({ type: 'account.deleted', target: accountTarget(user), details: { ...ended, transferred, removed, transferred_to: transferTo?.email ?? null } });
    return { ...ended, transferred, removed };
  }

  /** The projects an account owns of record, with their counts (what a delete hands on, or removes when empty). */
  /** The account's projects that a delete hands over (they hold documents, or others were given a role on them). */
  async projectsToHandOver(user: User): Promise<Project[]> {
    return this.holding(await this.ownedProjects(user));
  }

  private async holding(projects: Project[]): Promise<Project[]> {
    const members = await Promise.all(projects.map((p) => this.deps.members.list(p.id)));
    return projects.filter((p, i) => p.documentCount > 0 || members[i]!.length > 0);
  }

  async ownedProjects(user: User): Promise<Project[]> {
    const counted = await Promise.all((await this.deps.projects.ownedBy(user.id)).map((p) => this.deps.projects.get(p.id)));
    return counted.filter((p): p is Project => p !== null);
  }

  private async endCredentials(userId: string): Promise<Ended> {
    const now = this.deps.now();
    const [sessions, keys, grants] = await Promise.all([this.deps.sessions.deleteForUser(userId), this.deps.apiKeys.revokeAllOf(userId), this.deps.tokens.revokeAllOfUser(userId, now)]);
    return { sessions, keys, grants };
  }

  /** Refuses the change that would leave no active admin. */
  private async keepAnAdmin(): Promise<void> {
    if ((await this.deps.users.countAdmins()) <= 1) throw conflict('this is the only active admin: make another account an admin first');
  }

  /** A one-time link token for a new account with this address (shown once; only its hash is kept). */
  async invite(email: string, by: string | null): Promise<string> {
    const address = email.trim();
    const unsafe = unsafeTextProblem(address);
    if (unsafe) throw invalidRequest(`an email address ${unsafe}`);
    if (!/^[^\s@]+@[^\s@]+$/.test(address) || address.length > 254) throw invalidRequest(`"${address}" is not an email address`);
    if (await this.deps.users.findByEmail(address)) throw conflict(`an account with the e-mail ${address} exists already`);
    const token = randomUrlToken(32);
    await this.deps.invites.create(sha256Hex(token), address, by, INVITE_TTL_MS);
    await this.deps.audit.record({ type: 'account.invited', details: { email: address } });
    return token;
  }

  /** Invitations not yet used or expired (never their links: those were shown once). */
  openInvites(): Promise<{ email: string; createdAt: number; expiresAt: number }[]> {
    return this.deps.invites.listOpen();
  }

  /** The address an invitation link is for while it works (unused, unexpired); null otherwise. */
  invitation(token: string): Promise<string | null> {
    return token ? this.deps.invites.emailFor(sha256Hex(token)) : Promise.resolve(null);
  }

  /**
   * Accepts an invitation: makes its account with this password, for the one caller whose use of the link wins.
   * The password is checked first, so a weak one does not use the link up. Null for a used, expired or unknown link.
   */
  async acceptInvite(token: string, password: string): Promise<User | null> {
    const weak = checkPasswordStrength(password);
    if (weak) throw invalidRequest(weak);
    const email = token ? await this.deps.invites.consume(sha256Hex(token)) : null;
    return email === null ? null : this.deps.accounts.createUser(email, password);
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
    if (description.trim().length > 2000) throw invalidRequest('a group description is at most 2,000 characters');
    const group = await this.deps.groups.create(trimmed, description.trim());
    if (!group) throw conflict(`a group named "${trimmed}" exists already`);
    await this.deps.audit.record({ type: 'group.created', target: groupTarget(group) });
    return group;
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
  private local(group: Group): void {
    // Not a right the admin lacks: the group is kept elsewhere (a conflict with where it lives, said on the page).
    if (group.source !== LOCAL_GROUPS) throw conflict(`the group "${group.name}" comes from ${group.source}: change its members there`);
  }
}
