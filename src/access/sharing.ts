/**
 * Sharing a project: its members, adding or changing one (a user by e-mail, or a group), removing one, handing the
 * project to another owner of record — each for the project's owners only (AccessControl.check 'manage'), within
 * the instance's sharing policy.
 */
import type { AuditLog } from '../core/audit.js';
import { AppError, conflict, invalidRequest, notFound } from '../core/errors.js';
import type { GroupStore } from '../store/sql/groups.js';
import type { MemberKind, ProjectMemberStore } from '../store/sql/project-members.js';
import type { Project, ProjectStore } from '../store/sql/projects.js';
import type { SettingsStore } from '../store/sql/settings.js';
import type { UserStore } from '../store/sql/users.js';
import type { AccessControl, Actor } from './access-control.js';
import type { Role } from './roles.js';

/**
 * Who may share with whom: `anyone` — any owner with any account or group on this instance (the default);
 * `groups` — an owner only with the groups they belong to and the people in them; `admins` — only admins share.
 */
export const SHARING_POLICIES = ['anyone', 'groups', 'admins'] as const;
export type SharingPolicy = (typeof SHARING_POLICIES)[number];
export const isSharingPolicy = (v: string): v is SharingPolicy => (SHARING_POLICIES as readonly string[]).includes(v);

const POLICY_KEY = 'sharing_policy';

export interface Member {
  /** The user's or the group's id. */
  id: string;
  kind: MemberKind;
  email?: string;
  group?: string;
  role: Role;
  /** The owner of record: listed first, removed only by a transfer. */
  ofRecord?: true;
}

export type ShareTarget = { email: string } | { group: string };

export interface SharingDeps {
  access: AccessControl;
  members: ProjectMemberStore;
  projects: Pick<ProjectStore, 'get' | 'setOwner'>;
  users: Pick<UserStore, 'findByEmail' | 'findById' | 'emails'>;
  groups: Pick<GroupStore, 'findByName' | 'groupsOf' | 'members' | 'list'>;
  settings: Pick<SettingsStore, 'get' | 'set'>;
  /** Where shares, role changes, removals, transfers and policy changes are recorded. */
  audit: AuditLog;
}

export class Sharing {
  constructor(private readonly deps: SharingDeps) {}

  async policy(): Promise<SharingPolicy> {
    const value = await this.deps.settings.get(POLICY_KEY);
    return value && isSharingPolicy(value) ? value : 'anyone';
  }

  async setPolicy(policy: SharingPolicy): Promise<void> {
    const before = await this.policy();
    await this.deps.settings.set(POLICY_KEY, policy);
    await this.deps.audit.record({ type: 'sharing.policy_changed', details: { from: before, to: policy } });
  }

  /** A project's members, its owner of record first. Owners only. */
  async members(actor: Actor, projectId: string): Promise<Member[]> {
    const { project } = await this.deps.access.project(actor, projectId, 'manage', { scope: 'read:documents' });
    return this.list(project);
  }

  private async list(project: Project): Promise<Member[]> {
    const owner = (await this.deps.users.emails([project.userId])).get(project.userId);
    const rows = await this.deps.members.list(project.id);
    return [
      ...(owner ? [{ id: project.userId, kind: 'user' as const, email: owner, role: 'owner' as const, ofRecord: true as const }] : []),
      ...rows.map((r) => ({ id: r.memberId, kind: r.kind, ...(r.kind === 'user' ? { email: r.label } : { group: r.label }), role: r.role })),
    ];
  }

  /**
   * Whom each project the actor owns is shared with, for the projects list: the people (its owner of record too, when
   * that is someone else) and groups besides the actor. Projects the actor does not own are left out, as their members
   * are (owners only).
   */
  async sharedWith(actor: Actor, projects: readonly Project[]): Promise<Map<string, { people: number; groups: number }>> {
    const roles = await this.deps.access.roles(actor);
    const owned = projects.filter((p) => roles.get(p.id) === 'owner');
    const counts = new Map(owned.map((p) => [p.id, { people: p.userId === actor.userId ? 0 : 1, groups: 0 }]));
    for (const m of await this.deps.members.listOf(owned.map((p) => p.id))) {
      const c = counts.get(m.projectId)!;
      if (m.kind === 'group') c.groups += 1;
      else if (m.memberId !== actor.userId) c.people += 1;
    }
    return counts;
  }

  /** Gives a user (by e-mail) or a group a role on the project, or changes theirs. Owners only, within the policy. */
  async share(actor: Actor, projectId: string, target: ShareTarget, role: Role): Promise<{ member: Member; created: boolean }> {
    const { project } = await this.deps.access.project(actor, projectId, 'manage');
    const member = await this.resolve(actor, target);
    if (member.kind === 'user' && member.id === project.userId) throw conflict(`${member.email} owns this project already`);
    if (member.kind === 'user' && member.id === actor.userId) throw invalidRequest('you cannot change your own role on a project');
    const outcome = await this.deps.members.upsert(project.id, { id: member.id, kind: member.kind }, role, actor.userId);
    // Sharing again with the role a member has changes nothing: nothing to record.
    if (outcome === 'unchanged') return { member: { ...member, role }, created: false };
    await this.deps.audit.record({
      type: 'project.shared',
      target: { type: 'project', id: project.id, label: project.name },
      details: { member: member.id, member_kind: member.kind, member_name: member.email ?? member.group, role, change: outcome === 'created' ? 'added' : 'role' },
    });
    return { member: { ...member, role }, created: outcome === 'created' };
  }

  /** Removes a member (their own access, not what they uploaded). Owners only; the owner of record stays. */
  async unshare(actor: Actor, projectId: string, memberId: string): Promise<void> {
    const { project } = await this.deps.access.project(actor, projectId, 'manage');
    if (memberId === project.userId) throw conflict('the owner of record cannot be removed: transfer the project to someone else first');
    if (!(await this.deps.members.remove(project.id, memberId))) throw notFound('member');
    await this.deps.audit.record({ type: 'project.unshared', target: { type: 'project', id: project.id, label: project.name }, details: { member: memberId } });
  }

  /**
   * Makes another user the owner of record. The previous one stays an owner (a member row), so nothing is lost;
   * they may leave afterwards. Owners only.
   */
  async transfer(actor: Actor, projectId: string, email: string): Promise<Project> {
    const { project } = await this.deps.access.project(actor, projectId, 'manage');
    const to = await this.resolve(actor, { email });
    if (to.id === project.userId) return project;
    // A disabled account cannot sign in to take it: the project would be nobody's (issue 61, Low 15).
    if ((await this.deps.users.findById(to.id))?.disabledAt != null) throw conflict(`${email} is disabled: a project cannot be given to a disabled account (enable it first, or choose someone else)`);
    const moved = await this.deps.projects.setOwner(project.id, to.id, project.userId);
    if (moved === 'conflict') throw conflict(`${email} already owns a project named "${project.name}": rename one of them first`);
    if (!moved) throw conflict(`the project "${project.name}" was given to someone else meanwhile: look at its members again`);
    await this.deps.members.remove(project.id, to.id);
    await this.deps.members.upsert(project.id, { id: project.userId, kind: 'user' }, 'owner', actor.userId);
    await this.deps.audit.record({ type: 'project.transferred', target: { type: 'project', id: project.id, label: project.name }, details: { from: project.userId, to: to.id, to_email: to.email } });
    return (await this.deps.projects.get(project.id)) ?? project;
  }

  /**
   * What the share box offers as one types (owners only): the groups this actor may share with, as `group:<name>`,
   * and the people in the groups they are in. Never a list of every account: those the actor does not already work
   * with are typed in full.
   */
  async suggestions(actor: Actor): Promise<string[]> {
    const policy = await this.policy();
    const admin = await this.deps.access.isAdmin(actor.userId);
    if (policy === 'admins' && !admin) return [];
    const mine = await this.deps.groups.groupsOf(actor.userId);
    const groups = policy === 'groups' && !admin ? mine : await this.deps.groups.list();
    const people = new Set<string>();
    for (const g of mine) for (const m of await this.deps.groups.members(g.id)) if (m.id !== actor.userId) people.add(m.email);
    return [...groups.map((g) => `group:${g.name}`).sort(), ...[...people].sort()];
  }

  /**
   * The account or group a share names, when the policy lets this actor share with it. An address or group the
   * actor may not share with reads as one that does not exist.
   */
  private async resolve(actor: Actor, target: ShareTarget): Promise<Omit<Member, 'role'> & { email?: string }> {
    const policy = await this.policy();
    const admin = await this.deps.access.isAdmin(actor.userId);
    if (policy === 'admins' && !admin) throw new AppError('forbidden', 'only administrators may share projects on this instance (sharing policy: admins)');
    const mine = policy === 'groups' && !admin ? await this.deps.groups.groupsOf(actor.userId) : null;
    if ('group' in target) {
      const group = await this.deps.groups.findByName(target.group.trim());
      if (!group || (mine && !mine.some((g) => g.id === group.id))) throw notFound(`group "${target.group.trim()}"`);
      return { id: group.id, kind: 'group', group: group.name };
    }
    const email = target.email.trim();
    if (!email.includes('@')) {
      // A bare name ("editors") is most likely a group: say how to write one, when it is one this actor may share with.
      const group = await this.deps.groups.findByName(email);
      if (group && (!mine || mine.some((g) => g.id === group.id))) throw invalidRequest(`"${email}" is not an e-mail address: to share with the group ${group.name}, write group:${group.name}`);
      throw invalidRequest(`"${email}" is not an e-mail address: write a person's e-mail, or group:<name> for a group`);
    }
    const user = await this.deps.users.findByEmail(email);
    if (!user) throw notFound(`user with e-mail ${email}`);
    if (mine) {
      const shared = await Promise.all(mine.map((g) => this.deps.groups.members(g.id)));
      if (!shared.some((members) => members.some((m) => m.id === user.id))) throw notFound(`user with e-mail ${email}`);
    }
    return { id: user.id, kind: 'user', email: user.email };
  }
}
