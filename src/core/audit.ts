/**
 * The audit log's vocabulary and the seam every capability records through (docs/operations.md#audit-log): what
 * happened (`AuditEvent`), and `AuditLog`, which the daemon and the operator commands implement (store/audit-trail.ts)
 * and hand to the services that change accounts, credentials, shares and documents.
 *
 * Who did it and from where is the request's business, not each service's: the server opens an `AuditContext` per
 * request (client address, browser, request id) and names the signed-in account once it knows it; an operator
 * command opens one as the operator. Services record what they did and the context fills in the rest, so no
 * signature carries a client address through five layers.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Every kind of event, as stored (`type`) and logged (`audit.<type>`). docs/operations.md lists them. */
export const AUDIT_EVENT_TYPES = [
  'sign_in.succeeded',
  'sign_in.failed',
  'sign_in.locked_out',
  'sign_out',
  'session.ended',
  'session.confirmed',
  'totp.enabled',
  'totp.disabled',
  'recovery_codes.generated',
  'recovery_code.used',
  'two_factor.reset',
  'passkey.added',
  'passkey.renamed',
  'passkey.removed',
  'passkey_sign_in.changed',
  'api_key.created',
  'api_key.revoked',
  'oauth_app.registered',
  'oauth_app.deleted',
  'oauth_app.secret_rotated',
  'oauth.consented',
  'oauth.revoked',
  'account.created',
  'account.linked',
  'account.link_offered',
  'account.invited',
  'account.invite_revoked',
  'password_reset.requested',
  'password_reset.link_made',
  'password_reset.completed',
  'account.password_changed',
  'account.password_set',
  'account.email_changed',
  'account.disabled',
  'account.enabled',
  'account.deleted',
  'account.admin_changed',
  'account.quota_set',
  'project.quota_set',
  'group.created',
  'group.deleted',
  'group.member_added',
  'group.member_removed',
  'sharing.policy_changed',
  'project.shared',
  'project.unshared',
  'project.transferred',
  'project.deleted',
  'document.uploaded',
  'document.replaced',
  'document.deleted',
  'document.moved',
  'document.labelled',
  'label.created',
  'label.changed',
  'label.deleted',
  'saved_search.created',
  'saved_search.shared',
  'saved_search.renamed',
  'saved_search.deleted',
  'document.restored',
  'document.purged',
  'source.created',
  'source.changed',
  'source.removed',
  'backup.created',
  'restore.completed',
  'migrate.completed',
  'reindex.started',
  'mail.sent',
  'mail.failed',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** How the actor reached us: a web session, an API key, an OAuth token, the operator's command line, nobody yet, or the daemon itself. */
export type AuditVia = 'session' | 'api_key' | 'oauth' | 'operator' | 'anonymous' | 'system';

/**
 * Who caused an event, in one word: a person for themselves (`user`), an admin on others' accounts, groups or
 * settings (`admin`), the operator's command line, the identity provider's word at a sign-in (`sso`: an account
 * made, an admin flag or groups set), a source's pass (`source`), the daemon's own work (`system`), or nobody
 * signed in (`anonymous`: a failed sign-in).
 */
export const AUDIT_BY = ['user', 'admin', 'operator', 'sso', 'source', 'system', 'anonymous'] as const;
export type AuditBy = (typeof AUDIT_BY)[number];

/** `by` when neither the event nor its context says: from how the actor reached the server. */
export const byOfVia = (via: string): AuditBy => (via === 'operator' ? 'operator' : via === 'anonymous' ? 'anonymous' : via === 'system' ? 'system' : 'user');

export interface AuditActor {
  id: string | null;
  /** As it was then; looked up from `id` when absent. */
  email?: string | null;
}

/** What a request (or an operator command) knows about who is acting and from where. */
export interface AuditContext {
  actor: AuditActor | null;
  via: AuditVia;
  /** The API key's or OAuth grant's id, when one was used. */
  credentialId?: string | null;
  clientIp?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
  /** Set once the request acts as an admin (access/access-control.ts `requireAdmin`); else from `via`. */
  by?: AuditBy;
  /** Added to the details of every event recorded in this context (a source's pass: which source, its URL). */
  details?: Record<string, unknown>;
}

export interface AuditEvent {
  type: AuditEventType;
  /** What it was done to: `{ type: 'document', id, label: filename }`. */
  target?: { type: string; id: string; label?: string | null };
  /** Anything else worth keeping (never a secret: no password, code or key). */
  details?: Record<string, unknown>;
  /** Who, when not whoever the context says (a failed sign-in names the account that was tried). */
  actor?: AuditActor;
  /** Who caused it, when not the context's (`sso` for what a provider's sign-in changed, `source` for a pass). */
  by?: AuditBy;
}

/** Where events go: the database every replica shares, and the JSON log. */
export interface AuditLog {
  record(event: AuditEvent): Promise<void>;
}

const contexts = new AsyncLocalStorage<AuditContext>();

/** Runs `fn` with `context` as what events recorded inside it (however deep, however async) are about. */
export function withAuditContext<T>(context: AuditContext, fn: () => T): T {
  return contexts.run(context, fn);
}

/** The context of the request or command being served; undefined outside one (the daemon's own work). */
export function currentAuditContext(): AuditContext | undefined {
  return contexts.getStore();
}

/** Marks the current request as an admin's work on others (its events are `by: admin`). */
export function actingAsAdmin(): void {
  const context = contexts.getStore();
  if (context) context.by = 'admin';
}

/** Names who the current request acts as, once a credential or session says so. */
export function actingAs(actor: AuditActor, via: AuditVia, credentialId: string | null = null): void {
  const context = contexts.getStore();
  if (!context) return;
  context.actor = actor;
  context.via = via;
  context.credentialId = credentialId;
}
