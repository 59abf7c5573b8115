import type { Insertable, Selectable } from 'kysely';
import { byOfVia } from '../../core/audit.js';
import { spellings } from '../../core/name-spellings.js';
import type { Db } from './database.js';
import type { AuditEventsTable } from './schema.js';

/** One stored event (times in ms; details parsed). */
export interface AuditRecord {
  id: string;
  at: number;
  type: string;
  actorId: string | null;
  actorEmail: string | null;
  via: string;
  /** Who caused it (core/audit.ts AUDIT_BY). */
  by: string;
  credentialId: string | null;
  targetType: string | null;
  targetId: string | null;
  targetLabel: string | null;
  clientIp: string | null;
  userAgent: string | null;
  requestId: string | null;
  details: Record<string, unknown>;
}

/** What a listing may be narrowed to; each given field must match. */
export interface AuditFilter {
  /** An exact type (`sign_in.failed`), or a family ending in a dot (`sign_in.`). */
  type?: string;
  actorId?: string;
  /** The actor's e-mail as it was when they acted (ignoring case). */
  actorEmail?: string;
  by?: string;
  targetId?: string;
  clientIp?: string;
  /** From this time on (ms, inclusive) and before that one (exclusive). */
  since?: number;
  until?: number;
  /** Events older than this id (the previous page's last): newest first. */
  before?: string;
}

const toRecord = (r: Selectable<AuditEventsTable>): AuditRecord => ({
  id: r.id,
  at: Number(r.at),
  type: r.type,
  actorId: r.actor_id,
  actorEmail: r.actor_email,
  via: r.via,
  by: r.by ?? byOfVia(r.via),
  credentialId: r.credential_id,
  targetType: r.target_type,
  targetId: r.target_id,
  targetLabel: r.target_label,
  clientIp: r.client_ip,
  userAgent: r.user_agent,
  requestId: r.request_id,
  details: JSON.parse(r.details) as Record<string, unknown>,
});

/** A name lowered in each of its two spellings, for `lower(column) in (…)`. */
const lowered = (name: string): string[] => [...new Set(spellings(name).map((s) => s.toLowerCase()))];

/**
 * The audit log's rows: appended, listed newest first, and removed only by the retention the operator set. Nothing
 * here updates a row.
 */
export class AuditEventStore {
  constructor(private readonly db: Db) {}

  async append(row: Insertable<AuditEventsTable>): Promise<void> {
    await this.db.insertInto('audit_events').values(row).execute();
  }

  /**
   * Up to `limit` events matching `filter`, newest first. An actor's e-mail and a target's name match in any case (as
   * `lower` sees it) and either Unicode spelling: what was recorded is what was typed then, composed or not.
   */
  async list(filter: AuditFilter, limit: number): Promise<AuditRecord[]> {
    let q = this.db.selectFrom('audit_events').selectAll().orderBy('id', 'desc').limit(limit);
    if (filter.type?.endsWith('.')) q = q.where('type', '>=', filter.type).where('type', '<', `${filter.type.slice(0, -1)}/`);
    else if (filter.type) q = q.where('type', '=', filter.type);
    if (filter.actorId) q = q.where('actor_id', '=', filter.actorId);
    if (filter.actorEmail) q = q.where((eb) => eb(eb.fn('lower', ['actor_email']), 'in', lowered(filter.actorEmail!)));
    if (filter.by) q = q.where('by', '=', filter.by);
    // A target by its id, or by its name as it was then (a file name, an e-mail, a project's or source's name).
    if (filter.targetId) {
      const target = filter.targetId;
      q = q.where((eb) => eb.or([eb('target_id', '=', target), eb(eb.fn('lower', ['target_label']), 'in', lowered(target))]));
    }
    if (filter.clientIp) q = q.where('client_ip', '=', filter.clientIp);
    if (filter.since !== undefined) q = q.where('at', '>=', filter.since);
    if (filter.until !== undefined) q = q.where('at', '<', filter.until);
    if (filter.before) q = q.where('id', '<', filter.before);
    return (await q.execute()).map(toRecord);
  }

  /** Removes events older than `cutoff` (the retention); how many went. */
  async purgeBefore(cutoff: number): Promise<number> {
    const res = await this.db.deleteFrom('audit_events').where('at', '<', cutoff).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
