import type { Principal } from '../../../auth/principal.js';
import type { User } from '../../../store/sql/users.js';
import type { Services } from '../../services.js';
import { ErrorBody } from '../schemas.js';

/** What every admin route may answer besides its own outcomes. */
export const ADMIN_REFUSALS = {
  401: { description: 'No valid credential', schema: ErrorBody },
  403: { description: "The caller is not an admin, or uses a key limited to projects or an application's token", schema: ErrorBody },
};

/**
 * Every /api/v1/admin route and the audit log ask this first (access decides: AccessControl.requireAdminCredential).
 * Returns the admin's account, for what the action records as made by whom.
 */
export async function requireAdminCaller(s: Services, principal: Principal): Promise<User> {
  await s.access.requireAdminCredential(principal);
  return s.teamAdmin.userById(principal.userId);
}

/** An account named in a path: its id (usr_…) or its e-mail. */
export const accountNamed = (s: Services, ref: string): Promise<User> => (ref.startsWith('usr_') ? s.teamAdmin.userById(ref) : s.teamAdmin.user(ref));
