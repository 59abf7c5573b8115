/**
 * The audit log as operator commands write it: the same rows the daemon writes (store/audit-trail.ts), with the
 * operator as the actor — no account, `via: operator`, and the command with the system user and host that ran it
 * where a browser's user agent would be.
 */
import { hostname, userInfo } from 'node:os';
import { type AuditEvent, type AuditLog, withAuditContext } from '../core/audit.js';
import { systemClock } from '../core/clock.js';
import { createLogger } from '../core/logger.js';
import { AuditTrail } from '../store/audit-trail.js';
import { AuditEventStore } from '../store/sql/audit-events.js';
import type { Db } from '../store/sql/database.js';
import { openDatabase } from '../store/sql/open-database.js';
import { UserStore } from '../store/sql/users.js';

function systemUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'unknown');
  }
}

export function operatorAudit(db: Db, command: string): AuditLog {
  // The command's own output is its report: events go to the database only, not to a log on stdout.
  const trail = new AuditTrail({ store: new AuditEventStore(db), users: new UserStore(db, systemClock), log: createLogger('silent'), now: systemClock });
  const context = { actor: null, via: 'operator' as const, userAgent: `docsearch ${command} (${systemUser()}@${hostname()})` };
  return { record: (event) => withAuditContext(context, () => trail.record(event)) };
}

/**
 * Records an operator command's event in a library the command does not otherwise hold open for writing (the one a
 * backup copied, the one a restore made): a data directory's SQLite database, or a shared-mode PostgreSQL one.
 */
export async function recordInLibrary(where: { database?: string | undefined; dataDir: string }, command: string, event: AuditEvent): Promise<void> {
  const handle = await openDatabase({ url: where.database, dataDir: where.dataDir });
  try {
    await operatorAudit(handle.db, command).record(event);
  } finally {
    await handle.close();
  }
}
