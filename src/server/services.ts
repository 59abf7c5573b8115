import type { Quotas } from '../documents/quotas.js';
import type { AccessControl } from '../access/access-control.js';
import type { Sharing } from '../access/sharing.js';
import type { TeamAdmin } from '../access/team-admin.js';
import type { AccountService } from '../auth/accounts.js';
import type { ApiKeyService } from '../auth/api-keys.js';
import type { BearerResolver } from '../auth/principal.js';
import type { WebSessionService } from '../auth/web-sessions.js';
import type { PasskeyService, RelyingParty } from '../auth/passkeys.js';
import type { TwoFactorService } from '../auth/two-factor.js';
import type { AuditLog } from '../core/audit.js';
import type { AuditEventStore } from '../store/sql/audit-events.js';
import type { Clock } from '../core/clock.js';
import type { DocumentService } from '../documents/lifecycle.js';
import type { LabelService } from '../documents/labels.js';
import type { FileStore } from '../store/objects/originals.js';
import type { LibreOffice } from '../ingest/office/libreoffice.js';
import type { Reindexer } from '../ingest/reindex.js';
import type { Embedder } from '../models/embedder.js';
import type { FacetCounter } from '../search/facets.js';
import type { SearchService } from '../search/service.js';
import type { SourceService } from '../sources/service.js';
import type { ThumbnailRenderer } from '../pdf/thumbnail.js';
import type { ChunkIndex } from '../store/lancedb/chunks.js';
import type { DocumentStore } from '../store/sql/documents.js';
import type { LabelStore } from '../store/sql/labels.js';
import type { SavedSearchStore } from '../store/sql/saved-searches.js';
import type { ProjectStore } from '../store/sql/projects.js';
import type { UserStore } from '../store/sql/users.js';
import type { ServeConfig } from './config.js';
import type { HealthProbe } from './health.js';
import type { Sso } from './sso.js';
import type { NoticeStore } from '../store/sql/notices.js';
import type { Logger } from '../core/logger.js';
import type { DaemonMetrics } from './metrics/metrics.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailOutboxStore } from '../store/sql/mail-outbox.js';
import type { KnownDeviceStore } from '../store/sql/known-devices.js';
import type { Extractor } from '../ingest/extract.js';

/** Removes a project and everything in it (documents, their chunks and files). */
export interface ProjectRemoval {
  remove(projectId: string): Promise<void>;
}

/**
 * Everything route handlers and pages may use, built once by the daemon (src/server/daemon.ts).
 * Handlers get capabilities from here and never open stores themselves.
 */
export interface Services {
  config: ServeConfig;
  version: string;
  log: Logger;
  now: Clock;
  /** The externally reachable base URL, without a trailing slash. */
  publicUrl: () => string;
  accounts: AccountService;
  /** What a principal may do with which project: every route and page asks it (docs/permissions.md). */
  access: AccessControl;
  /** Project members: share, unshare, transfer, and the sharing policy. */
  sharing: Sharing;
  /** Accounts, groups and invitations, for admins. */
  teamAdmin: TeamAdmin;
  /** Which quota applies to an account (its own or --quota-default); uploads are checked in DocumentService.accept. */
  quotas: Pick<Quotas, 'userQuota'>;
  /** E-mails of accounts (owners, uploaders). */
  users: UserStore;
  apiKeys: ApiKeyService;
  projects: ProjectStore;
  projectRemoval: ProjectRemoval;
  webSessions: WebSessionService;
  /** Authenticator apps and recovery codes, and the `--require-2fa` policy. */
  twoFactor: TwoFactorService;
  passkeys: PasskeyService;
  /** Who passkeys are for (the public URL's host), or why this server cannot offer them. */
  relyingParty: () => RelyingParty | { unavailable: string };
  /** Records what people and operators do (docs/operations.md#audit-log). */
  audit: AuditLog;
  /** The audit log's rows, for admins to read. */
  auditEvents: AuditEventStore;
  /** Asked in order by the bearer middleware: API keys first, then OAuth access tokens. */
  bearerResolvers: BearerResolver[];
  healthProbes: Record<string, HealthProbe>;
  /** The configured embedder (passages at ingest, queries at search). */
  embedder: Embedder;
  /** The chunks table: vectorSearch / keywordSearch for search; reindexRequired() → 409 while true. */
  chunks: ChunkIndex;
  documents: DocumentStore;
  /** Projects' label vocabularies and the labels on documents (read side). */
  labels: LabelStore;
  /** Changing labels, their chunks kept in step. */
  labelService: LabelService;
  /** People's named searches, some shared with a project's members. */
  savedSearches: SavedSearchStore;
  /** Accepting uploads, deleting documents, waiting for them to settle. */
  ingest: DocumentService;
  files: FileStore;
  /** Parses originals in worker threads with a time and memory limit (the viewer's tables read sheets through it). */
  extractor: Extractor;
  /** Converts legacy .doc, .xls and .ppt, when it was found at start and --libreoffice is not off. */
  libreOffice?: LibreOffice;
  /** OCR of scans, when --ocr is not off: the operator's languages and those installed (the project Settings tab). */
  ocr?: { languages: string; installed(): Promise<string[]> };
  reindex: Reindexer;
  /** POST /api/v1/search: retrieval, reranking, hydration, highlights. */
  search: SearchService;
  /** Facet counts, search's own counter: GET /api/v1/documents?facets= counts the whole list with it. */
  facets: FacetCounter;
  /** First-page images of PDFs (document page, API). */
  thumbnails: ThumbnailRenderer;
  /** GET /metrics: this replica's Prometheus registry, and what hot paths report into. */
  metrics: DaemonMetrics;
  /** Sources that keep projects current (their passes run in the daemon's scheduler). */
  sources: SourceService;
  /** Sign-in through the identity provider (docs/sso.md); null when none is configured. */
  sso: Sso | null;
  /** What the web's bell shows each person (a source paused or failing). */
  notices: NoticeStore;
  /** Queues e-mail in the outbox (docs/mail.md); `enabled` is false without --smtp-url. */
  mailer: Mailer;
  /** The outbox's rows, for admins to read. */
  outbox: MailOutboxStore;
  /** Browsers each account signed in from (new-browser notices). */
  devices: KnownDeviceStore;
}
