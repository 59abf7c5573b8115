import { Readable } from 'node:stream';
import { z } from 'zod';
import { AUDIT_BY, AUDIT_EVENT_TYPES } from '../../core/audit.js';
import { toIso } from '../../core/clock.js';
import type { AuditRecord } from '../../store/sql/audit-events.js';
import type { Services } from '../services.js';
import { requireAdminCaller } from './admin/guard.js';
import { Time } from './documents/query.js';
import { cursorIn, decodeCursor, encodeCursor, listCursor } from './pagination.js';
import { defineRoute } from './route.js';
import { ErrorBody, Timestamp } from './schemas.js';
import { MAX_EMAIL_CHARS } from '../../core/name-limits.js';
import { MAX_SOURCE_URL_CHARS } from '../../core/source-limits.js';

export const AuditEvent = z
  .object({
    id: z.string(),
    at: Timestamp,
    type: z.string().describe(`what happened: ${AUDIT_EVENT_TYPES.join(', ')}`),
    actor: z.object({ id: z.string().nullable(), email: z.string().nullable() }).nullable().describe('the account that did it (as it was then); null for the operator, the daemon, or nobody signed in'),
    via: z.enum(['session', 'api_key', 'oauth', 'operator', 'anonymous', 'system']).describe('how the actor reached the server'),
    by: z
      .enum(AUDIT_BY)
      .describe('who caused it: a person for themselves (user), an admin, the operator, the identity provider at a sign-in (sso), a source, the daemon (system), nobody signed in (anonymous)'),
    credential_id: z.string().nullable().describe('the API key or OAuth grant used, if any'),
    target: z.object({ type: z.string(), id: z.string(), label: z.string().nullable() }).nullable().describe('what it was done to'),
    client_ip: z.string().nullable().describe('the client address (the real one behind --trust-proxy)'),
    user_agent: z.string().nullable().describe("the browser or client; for the operator, the command, system user and host"),
    request_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEvent' });

/** The listing's filters and page, for the API and the Admin page alike. */
export const AuditQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: listCursor('aud').optional().describe('next_cursor of the previous page (with the same filters)'),
  type: z
    .string()
    .max(60)
    .regex(/^[a-z_]+(\.[a-z_]*)?$/, 'must be an event type (sign_in.failed) or a family ending in a dot (sign_in.)')
    .optional()
    .describe('an event type, or a family of them ending in a dot (`sign_in.`)'),
  actor: z.string().min(1).max(MAX_EMAIL_CHARS).optional().describe('the account that acted: its id (usr_…) or its e-mail as it was then'),
  by: z.enum(AUDIT_BY).optional().describe('who caused it (user, admin, operator, sso, source, system, anonymous)'),
  target: z.string().min(1).max(MAX_SOURCE_URL_CHARS).optional().describe('what it was done to: its id (a document, project, account, key, application…), or its name as it was then (a file name, an e-mail, a source URL)'),
  client_ip: z.string().min(1).max(64).optional(),
  since: Time.optional().describe('at or after this date or time'),
  until: Time.optional().describe('before this date or time'),
  format: z
    .enum(['json', 'jsonl'])
    .default('json')
    .describe('jsonl: every matching event at once (no page, no cursor), one JSON object a line (JSON Lines), for export'),
});

export function auditEventToWire(e: AuditRecord): z.infer<typeof AuditEvent> {
  return {
    id: e.id,
    at: toIso(e.at),
    type: e.type,
    actor: e.actorId || e.actorEmail ? { id: e.actorId, email: e.actorEmail } : null,
    via: e.via as z.infer<typeof AuditEvent>['via'],
    by: e.by as z.infer<typeof AuditEvent>['by'],
    credential_id: e.credentialId,
    target: e.targetType && e.targetId ? { type: e.targetType, id: e.targetId, label: e.targetLabel } : null,
    client_ip: e.clientIp,
    user_agent: e.userAgent,
    request_id: e.requestId,
    details: e.details,
  };
}

export const listAuditEvents = (s: Services) =>
  defineRoute({
    name: 'audit.list',
    method: 'GET',
    path: '/audit-events',
    scope: 'authenticated',
    tag: 'audit',
    summary:
      'The audit log, newest first (admins only): sign-ins and their failures, lockouts, second factors and passkeys, keys, applications, consents, account changes, shares, document deletes and moves, backups, restores and operator commands. Filters narrow it; cursor-paginated.',
    query: AuditQuery,
    responses: {
      200: {
        description: 'A page of events; with format=jsonl every matching event, an Event a line (application/x-ndjson)',
        schema: z.object({ events: z.array(AuditEvent), next_cursor: z.string().nullable() }),
        media: ['application/x-ndjson'],
      },
      400: { description: 'Bad query', schema: ErrorBody },
      403: { description: "The caller is not an admin, or uses a key limited to projects or an application's token", schema: ErrorBody },
    },
    async handler({ query, principal, ctx }) {
      // The log is the whole library's: a key limited to projects sees nothing else, as at the admin API.
      await requireAdminCaller(s, principal);
      if (query.format === 'jsonl') {
        auditBefore(query); // a cursor of other filters is refused before the stream begins
        ctx.status = 200;
        ctx.type = 'application/x-ndjson';
        ctx.set('Content-Disposition', 'attachment; filename="audit-events.jsonl"');
        ctx.body = Readable.from(exportLines(s, query));
        return { status: 200 };
      }
      const { events, nextCursor } = await findAuditEvents(s, query);
      return { status: 200, body: { events: events.map(auditEventToWire), next_cursor: nextCursor } };
    },
  });

/** Every event matching the query, newest first, a JSON line each: read a page at a time, sent as it is read. */
async function* exportLines(s: Services, query: z.infer<typeof AuditQuery>): AsyncGenerator<string> {
  let cursor: string | undefined = query.cursor;
  for (;;) {
    const { events, nextCursor } = await findAuditEvents(s, { ...query, limit: 200, ...(cursor ? { cursor } : {}) });
    for (const e of events) yield `${JSON.stringify(auditEventToWire(e))}\n`;
    if (!nextCursor) return;
    cursor = nextCursor;
  }
}

/** A page of events matching the query, newest first, and the cursor of the next (older) one. The caller checked admin. */
export async function findAuditEvents(s: Services, query: z.infer<typeof AuditQuery>): Promise<{ events: AuditRecord[]; nextCursor: string | null }> {
  const events = await s.auditEvents.list(
    {
      ...(query.type ? { type: query.type } : {}),
      ...(query.actor ? (query.actor.startsWith('usr_') ? { actorId: query.actor } : { actorEmail: query.actor }) : {}),
      ...(query.by ? { by: query.by } : {}),
      ...(query.target ? { targetId: query.target } : {}),
      ...(query.client_ip ? { clientIp: query.client_ip } : {}),
      ...(query.since !== undefined ? { since: query.since } : {}),
      ...(query.until !== undefined ? { until: query.until } : {}),
      ...(query.cursor ? { before: auditBefore(query)! } : {}),
    },
    query.limit + 1,
  );
  const page = events.slice(0, query.limit);
  return { events: page, nextCursor: events.length > query.limit ? encodeCursor(page.at(-1)!.id, auditScope(query)) : null };
}

/** What an audit cursor belongs to: the log under these filters (any admin's: it is one log). */
const auditScope = (q: z.infer<typeof AuditQuery>) => ['audit-events', q.type, q.actor, q.by, q.target, q.client_ip, q.since, q.until].map((v) => v ?? null);

/** Whether the query's cursor is one issued for these filters (the Admin page starts again, saying so, when not). */
export const auditCursorFits = (query: z.infer<typeof AuditQuery>): boolean => query.cursor === undefined || cursorIn(query.cursor, 'aud', auditScope(query)) !== undefined;

/** Where the query's cursor says the previous page ended; a 400 when it is not one issued for these filters. */
const auditBefore = (query: z.infer<typeof AuditQuery>) => decodeCursor(query.cursor, 'aud', auditScope(query));
