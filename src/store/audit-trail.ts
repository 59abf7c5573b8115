/**
 * The audit log as the daemon and the operator commands keep it: each event is a row in the database every replica
 * shares (so replicas keep one log, carried by backup, restore and migrate) and an `audit.<type>` JSON log line for
 * log shippers. Who and from where come from the current AuditContext (core/audit.ts) unless the event says.
 */
import { type AuditEvent, type AuditLog, byOfVia, currentAuditContext } from '../core/audit.js';
import type { Clock } from '../core/clock.js';
import { newId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { AuditEventStore } from './sql/audit-events.js';
import type { UserStore } from './sql/users.js';

/** Longest user agent kept: enough to tell browsers apart, not a place to store a megabyte. */
const MAX_USER_AGENT = 400;

export class AuditTrail implements AuditLog {
  constructor(
    private readonly deps: {
      store: Pick<AuditEventStore, 'append'>;
      users: Pick<UserStore, 'emails'>;
      log: Logger;
      now: Clock;
    },
  ) {}

  /**
   * Appends the event. A failure to write it is logged (`audit.write_failed`) and does not undo or fail what was
   * done: the action happened, and refusing the answer would only hide that it did.
   */
  async record(event: AuditEvent): Promise<void> {
    const context = currentAuditContext() ?? { actor: null, via: 'system' as const };
    const actor = event.actor ?? context.actor;
    const actorId = actor?.id ?? null;
    let actorEmail = actor?.email ?? null;
    const at = this.deps.now();
    const details = { ...context.details, ...event.details };
    const row = {
      id: newId('aud', at),
      at,
      type: event.type,
      actor_id: actorId,
      actor_email: actorEmail,
      via: context.via,
      credential_id: context.credentialId ?? null,
      target_type: event.target?.type ?? null,
      target_id: event.target?.id ?? null,
      target_label: event.target?.label ?? null,
      client_ip: context.clientIp ?? null,
      user_agent: context.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
      request_id: context.requestId ?? null,
      details: JSON.stringify(details),
      by: event.by ?? context.by ?? byOfVia(context.via),
    };
    try {
      if (actorId && actorEmail === null) row.actor_email = actorEmail = (await this.deps.users.emails([actorId])).get(actorId) ?? null;
      await this.deps.store.append(row);
    } catch (err) {
      this.deps.log.error({ event: 'audit.write_failed', err, type: event.type }, 'could not write an audit event');
    }
    this.deps.log.info(
      {
        event: `audit.${event.type}`,
        audit_id: row.id,
        req_id: row.request_id ?? undefined,
        actor_id: actorId,
        actor_email: actorEmail,
        via: row.via,
        by: row.by,
        credential_id: row.credential_id,
        target_type: row.target_type,
        target_id: row.target_id,
        target_label: row.target_label,
        client_ip: row.client_ip,
        user_agent: row.user_agent,
        details,
      },
      `audit: ${event.type}`,
    );
  }
}
