import { AccountService } from '../auth/accounts.js';
import type { AuditLog } from '../core/audit.js';
import type { Clock } from '../core/clock.js';
import { ApiKeyStore } from '../store/sql/api-keys.js';
import type { Db } from '../store/sql/database.js';
import { GroupStore } from '../store/sql/groups.js';
import { InviteStore } from '../store/sql/invites.js';
import type { Mailer } from '../mail/mailer.js';
import { AccountOverviewStore } from '../store/sql/account-overview.js';
import { QuotaStore } from '../store/sql/quotas.js';
import { PasswordResetStore } from '../store/sql/password-resets.js';
import { LoginAttemptStore } from '../store/sql/login-attempts.js';
import { OAuthTokenStore } from '../store/sql/oauth-tokens.js';
import { ProjectMemberStore } from '../store/sql/project-members.js';
import { ProjectStore } from '../store/sql/projects.js';
import { SavedSearchStore } from '../store/sql/saved-searches.js';
import { SessionStore } from '../store/sql/sessions.js';
import { SetupTokenStore } from '../store/sql/setup-tokens.js';
import { UserStore } from '../store/sql/users.js';
import { TeamAdmin } from './team-admin.js';

/**
 * TeamAdmin on a library's database: the daemon's (the Admin pages), or the one an operator command opens on the
 * server machine (`docsearch users`, `docsearch groups`). One wiring, so both end the same credentials.
 */
export function openTeamAdmin(db: Db, now: Clock, audit: AuditLog, mailer?: Mailer): TeamAdmin {
  const users = new UserStore(db, now);
  const projects = new ProjectStore(db, now);
  return new TeamAdmin({
    users,
    groups: new GroupStore(db, now),
    members: new ProjectMemberStore(db, now),
    projects,
    apiKeys: new ApiKeyStore(db, now),
    sessions: new SessionStore(db, now),
    tokens: new OAuthTokenStore(db),
    savedSearches: new SavedSearchStore(db, now),
    invites: new InviteStore(db, now),
    resets: new PasswordResetStore(db, now),
    overview: new AccountOverviewStore(db),
    quotas: new QuotaStore(db),
    ...(mailer ? { mailer } : {}),
    accounts: new AccountService(users, projects, new SetupTokenStore(db, now), new LoginAttemptStore(db, now)),
    now,
    audit,
  });
}
