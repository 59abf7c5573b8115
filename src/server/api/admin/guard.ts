import type { Principal } from '../../../auth/principal.js';
import { KEYS_SCOPE } from '../../../auth/scopes.js';
import { AppError } from '../../../core/errors.js';
import type { User } from '../../../store/sql/users.js';
import type { Services } from '../../services.js';
import { ErrorBody } from '../schemas.js';

/** What every admin route may answer besides its own outcomes. */
export const ADMIN_REFUSALS = {
  401: { description: 'No valid credential', schema: ErrorBody },
  403: { description: "The caller is not an admin, or uses a key limited to projects or an application's token", schema: ErrorBody },
};

/**
 * Every /api/v1/admin route and the audit log ask this first: the caller is an admin (now, on every replica), through a
 * credential not limited to some projects (such a key is for those projects' documents, not for running the library)
 * and not an application's token. Returns the
 * admin's account, for what the action records as made by whom.
 */
export async function requireAdminCaller(s: Services, principal: Principal): Promise<User> {
  await s.access.requireAdmin(principal);
  if (principal.projectLimit !== null) throw new AppError('forbidden', 'a key limited to some projects cannot use the admin API: use a key without a project limit');
  // An admin who connects an application for their documents has not handed it the library: its consent screen
  // asked for documents only. The docsearch CLI's own login (which holds manage:keys) is the admin's, as at the keys.
  if (principal.kind === 'oauth' && !principal.scopes.includes(KEYS_SCOPE)) {
    throw new AppError('forbidden', "an application's access token cannot use the admin API: use an API key, or the docsearch command (docsearch login)");
  }
  return s.teamAdmin.userById(principal.userId);
}

/** An account named in a path: its id (usr_…) or its e-mail. */
export const accountNamed = (s: Services, ref: string): Promise<User> => (ref.startsWith('usr_') ? s.teamAdmin.userById(ref) : s.teamAdmin.user(ref));
