import type { Scope } from '../auth/scopes.js';
import type { Role } from '../store/sql/project-members.js';

export type { Role };

/** Roles from least to most: each can do everything the one before it can (docs/permissions.md). */
export const ROLES = ['viewer', 'editor', 'owner'] as const satisfies readonly Role[];

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/**
 * What can be done with a project, by the least role that may:
 * - `read`: search it, list and read its documents, their text, thumbnails and originals (viewer);
 * - `edit`: upload into it, rename, move, retry and delete its documents (editor);
 * - `manage`: share and unshare it, rename or delete it, transfer it (owner).
 */
export type ProjectAction = 'read' | 'edit' | 'manage';

export const ACTION_ROLE: Record<ProjectAction, Role> = { read: 'viewer', edit: 'editor', manage: 'owner' };

/** The credential scope each action needs besides the role (a read-only key or token reads, and nothing more). */
export const ACTION_SCOPE: Record<ProjectAction, Scope> = { read: 'read:documents', edit: 'write:documents', manage: 'write:documents' };

export const roleRank = (role: Role): number => ROLES.indexOf(role);

/** Whether `role` may do `action`. */
export const roleAllows = (role: Role, action: ProjectAction): boolean => roleRank(role) >= roleRank(ACTION_ROLE[action]);

/** The higher of two roles (a user's effective role is the highest of their direct and group grants). */
export const higher = (a: Role, b: Role): Role => (roleRank(a) >= roleRank(b) ? a : b);
