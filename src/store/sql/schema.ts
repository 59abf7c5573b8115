import type { Generated } from 'kysely';

/**
 * Row types of every table, on SQLite and PostgreSQL alike. Times are integer milliseconds since the epoch
 * (bigint on PostgreSQL, read back as numbers); flags are 0/1 integers; JSON columns are text. Each table is
 * written by exactly one module in this folder.
 */
export interface UsersTable {
  id: string;
  email: string;
  password_hash: string;
  created_at: number;
  updated_at: number;
  /** 1 for an admin (012): manages accounts, groups and the sharing policy. */
  is_admin: number;
  /** When the account was disabled: it signs in to nothing, every credential of it fails (012). */
  disabled_at: number | null;
  /** When the account was deleted: the row stays, without e-mail or password, as the uploader of its documents (012). */
  deleted_at: number | null;
  /** 1: a passkey alone signs the account in (passwordless); 0: a passkey is a second factor after the password (015). */
  passkey_sign_in: Generated<number>;
  /** The identity provider that sets the admin flag at each sign-in (`--sso-admin-group`); null: set here (019). */
  admin_managed_by: string | null;
  /** When an admin or the person let the provider take this local account over at its next sign-in (019). */
  link_offered_at: number | null;
  /** The last sign-in of any kind (020); null: never signed in since. */
  last_sign_in_at: number | null;
  /** An admin's limit on the bytes of the live documents the account uploaded (025); null: `--quota-default`. */
  quota_bytes: number | null;
}

export interface GroupsTable {
  id: string;
  name: string;
  description: string;
  /** 'local' (managed by admins) or the identity provider's name (synced at sign-in, read-only here). */
  source: string;
  created_at: number;
  updated_at: number;
}

export interface GroupMembersTable {
  /** `<group_id>:<user_id>`: one key column, as every table has. */
  id: string;
  group_id: string;
  user_id: string;
  created_at: number;
}

/** A user's or a group's role on a project; the owner of record (`projects.user_id`) has no row. */
export interface ProjectMembersTable {
  /** `<project_id>:<member_id>`: one key column, as every table has. */
  id: string;
  project_id: string;
  member_id: string;
  member_kind: 'user' | 'group';
  role: 'viewer' | 'editor' | 'owner';
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export interface InvitesTable {
  token_hash: string;
  email: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** 1: the account it makes is an admin (020). */
  is_admin: Generated<number>;
  /** A local group the account it makes joins (020). */
  group_id: string | null;
}

/** Mail waiting to be sent, or sent, or given up on (020; docs/mail.md). */
export interface MailOutboxTable {
  id: string;
  /** invite | password_reset | sign_in_notice | source_alert | test */
  kind: string;
  to_address: string;
  subject: string;
  /** The text (and HTML) body, sealed under the secrets key; null once sent (it may hold a one-time link). */
  body_sealed: string | null;
  status: 'queued' | 'sent' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: number;
  /** The sender that holds the row while it sends, and until when (a crashed sender's claim runs out). */
  claimed_by: string | null;
  claimed_until: number | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
  /** What the mail server called it (its queue id in the 250 reply, or the Message-ID). */
  message_id: string | null;
}

/** One-time password reset links (020): only the SHA-256 of a link's token is kept. */
export interface PasswordResetsTable {
  token_hash: string;
  user_id: string;
  /** The admin who made it; null: the person asked for it themselves ("Forgot password?"). */
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** A browser an account has signed in from (020): `id` is the SHA-256 of the account id and the browser's cookie. */
export interface KnownDevicesTable {
  id: string;
  user_id: string;
  user_agent: string | null;
  created_at: number;
  last_seen_at: number;
}

/** An account's link to who it is at an identity provider (017; docs/sso.md). */
export interface IdentitiesTable {
  id: string;
  user_id: string;
  /** An OpenID Connect issuer URL, or `trusted-header` for the sign-in proxy. */
  provider: string;
  /** The provider's stable id of the person: the ID token's `sub`, or the proxy's user header. */
  subject: string;
  created_at: number;
  last_sign_in_at: number;
}

export interface SessionsTable {
  /** sha256 of the cookie value: the session id itself is never stored. */
  id_hash: string;
  user_id: string | null;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
  /** What a form created for the next page to show once, sealed (010; see auth/web-sessions.ts). */
  once_sealed: string | null;
  /** How it was signed in ('password', 'password+totp', 'passkey', …; 015); null for an anonymous or older session. */
  signed_in_with: string | null;
  /** The client address and browser it was last seen from (015). */
  client_ip: string | null;
  user_agent: string | null;
  /** The account whose password was right, waiting for its second factor until `pending_until` (015). */
  pending_user_id: string | null;
  pending_until: number | null;
  /** A WebAuthn challenge this session was given, single use, until `challenge_until` (015). */
  challenge: string | null;
  challenge_until: number | null;
  /** Signed in through this identity provider (its issuer), as this subject, in its session `provider_sid` (019). */
  provider: string | null;
  provider_subject: string | null;
  provider_sid: string | null;
  /** The provider's refresh token, sealed under the secrets key: the periodic re-check asks with it (019). */
  provider_refresh: string | null;
  /** When the provider last said this session still stands (019). */
  provider_checked_at: number | null;
  /** When its person last proved who they are: the sign-in, or a confirmation in sudo mode (023). */
  confirmed_at: number | null;
}

/** An account's authenticator-app (TOTP) secret, sealed (015). */
export interface TotpSecretsTable {
  user_id: string;
  secret_sealed: string;
  created_at: number;
  /** Null while it is being set up (no code confirmed yet). */
  enabled_at: number | null;
  /** The last time step whose code was accepted: no code is accepted twice. */
  last_step: number | null;
}

/** One-time recovery codes: their hashes (015). */
export interface RecoveryCodesTable {
  code_hash: string;
  user_id: string;
  created_at: number;
  used_at: number | null;
}

/** WebAuthn credentials (015): public keys, nothing secret. */
export interface PasskeysTable {
  id: string;
  user_id: string;
  /** base64url, as the browser names it. */
  credential_id: string;
  /** COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** JSON array of transports (usb, internal, hybrid, …). */
  transports: string;
  name: string;
  backed_up: number;
  created_at: number;
  last_used_at: number | null;
}

/** The audit log (015): append-only. */
export interface AuditEventsTable {
  /** Sorts by time (core/ids.ts): the cursor. */
  id: string;
  at: number;
  type: string;
  actor_id: string | null;
  actor_email: string | null;
  /** 'session' | 'api_key' | 'oauth' | 'operator' | 'anonymous' | 'system'. */
  via: string;
  credential_id: string | null;
  target_type: string | null;
  target_id: string | null;
  target_label: string | null;
  client_ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** JSON object. */
  details: string;
  /** Who caused it: user, admin, operator, sso, source, system, anonymous (019). */
  by: Generated<string | null>;
}

export interface SetupTokensTable {
  token_hash: string;
  created_at: number;
  used_at: number | null;
}

export interface LoginAttemptsTable {
  key: string;
  failures: number;
  window_start: number;
  locked_until: number | null;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string | null;
  prefix: string;
  last4: string;
  key_hash: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** JSON array of the projects the key is limited to; null: every project its user may read (012). */
  project_ids: string | null;
  /** When the key stops authenticating (ms); null: never (018). */
  expires_at: number | null;
}

export interface ProjectsTable {
  id: string;
  /** The owner of record: an owner without a `project_members` row, named as the project's owner (012). */
  user_id: string;
  name: string;
  description: string;
  metadata: string;
  is_default: number;
  /** The language its documents are set to (ISO 639-1), or null: detected per chunk (019). */
  language: string | null;
  /** An admin's limit on the bytes of the project's live documents (025); null: none. */
  quota_bytes: number | null;
  /** The OCR languages its uploads are read in ("deu+eng", 028); null: the operator's `--ocr-languages`. */
  ocr_languages: string | null;
  created_at: number;
  updated_at: number;
}

export interface DocumentsTable {
  id: string;
  /** Who uploaded it (its project decides who may read it). */
  user_id: string;
  project_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  metadata: string;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  progress: number;
  chunk_count: number;
  pages: number | null;
  warnings: string;
  error: string | null;
  embedder_id: string | null;
  /** Relative path it was uploaded from (upload --sync), or null. */
  path: string | null;
  /** The document that replaced it at the same path, and when: set when that one became ready. */
  replaced_by: string | null;
  replaced_at: number | null;
  /** When it last became ready (null: never, or before this column existed). */
  ready_at: number | null;
  /** The e-mail this document was attached to (its attachments are documents of their own), or null. */
  attached_to: string | null;
  /** The source it came from and its path there (014), or null: an upload. */
  source_id: string | null;
  source_path: string | null;
  /** When it was deleted into the trash (null: it is not in the trash), and by whom (a user id). */
  trashed_at: number | null;
  trashed_by: string | null;
  /** The language most of its chunks are in (null: not ready yet, or ready before 019), and the one it is set to (019). */
  language: string | null;
  language_setting: string | null;
  /** The OCR languages its upload or project set ("deu+eng", 028); null: the operator's `--ocr-languages`. */
  ocr_languages: string | null;
  created_at: number;
  updated_at: number;
}

export interface JobsTable {
  id: Generated<number>;
  document_id: string;
  user_id: string;
  kind: string;
  state: 'pending' | 'running' | 'done' | 'failed';
  attempts: number;
  /** 1 once the job was handed back unfinished: its next run clears rows an earlier run may have written. */
  released: Generated<number>;
  run_after: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_error: string | null;
  /** Shared mode: the replica that accepted the upload (see migration 007); null otherwise. */
  origin: string | null;
  created_at: number;
  updated_at: number;
}

/** The turn in which each user was last served a job (JobStore.claim's rotation). */
export interface JobTurnsTable {
  user_id: string;
  turn: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface OAuthClientsTable {
  id: string;
  user_id: string | null;
  name: string;
  secret_hash: string | null;
  is_public: number;
  /** JSON array of exact-match redirect URIs. */
  redirect_uris: string;
  loopback_any_port: number;
  created_at: number;
  updated_at: number;
  /** 'operator' | 'user' | 'dynamic' (RFC 7591) | 'metadata_document' (client ID metadata document). */
  registration: string;
  client_uri: string | null;
}

export interface OAuthGrantsTable {
  id: string;
  user_id: string;
  client_id: string;
  scopes: string;
  created_at: number;
  revoked_at: number | null;
  /** RFC 8707 resource the grant's tokens are for; null = the REST API. */
  resource: string | null;
}

export interface OAuthCodesTable {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  grant_id: string | null;
  resource: string | null;
}

export interface OAuthTokensTable {
  token_hash: string;
  kind: 'access' | 'refresh';
  grant_id: string;
  client_id: string;
  user_id: string;
  scopes: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  resource: string | null;
}

/** A source that keeps a project current (014; store/sql/sources.ts). */
export interface SourcesTable {
  id: string;
  project_id: string;
  /** Whose documents its items become (the project's owner). */
  user_id: string;
  kind: string;
  /** Without credentials (they are in `secrets`). */
  url: string;
  every_ms: number;
  /** JSON object: the kind's options that are not secret. */
  options: string;
  /** The kind's secrets as a JSON object sealed under the library's secrets key (core/sealed-secret.ts), or null. */
  secrets: string | null;
  status: 'active' | 'paused';
  paused_reason: string | null;
  /** 1: the owner confirmed; the next pass deletes what it finds gone, however much. */
  confirm_deletions: number;
  /** Where the kind's next listing starts (a commit, a UID), or null. */
  cursor: string | null;
  /** Number of the current (or last) pass; items listed in it have `seen_in` = pass. */
  pass: number;
  /** The last path a pass still open has recorded (a resumable listing continues after it), or null. */
  resume_after: string | null;
  next_sync_at: number;
  /** When someone asked for a pass now (one running then is followed by another). */
  requested_at: number | null;
  syncing_since: number | null;
  /** Which process runs the pass (the scheduler's id, in its log lines). */
  syncing_on: string | null;
  last_sync_at: number | null;
  /** JSON: what the last finished pass did. */
  last_result: string | null;
  error: string | null;
  failures: number;
  created_at: number;
  updated_at: number;
  /** JSON: the deletions the guard holds for an owner's confirmation (why, how many, which); null when none (019). */
  held_deletions: string | null;
  /** The labels (names, a JSON array) it puts on every document it brings (022). */
  labels: string;
}

/** What the web's bell shows a person (019): a source of theirs paused or failing. */
export interface NoticesTable {
  id: string;
  user_id: string;
  /** 'source.held', 'source.paused', 'source.failing'. */
  kind: string;
  project_id: string | null;
  /** What it is about (a source's id): one unread notice per person, kind and subject. */
  subject_id: string | null;
  message: string;
  /** A page of this server (a path) where it can be dealt with. */
  link: string | null;
  created_at: number;
  read_at: number | null;
}

export interface SourceItemsTable {
  /** `source_id` and `path` joined by a newline (store/sql/sources.ts: itemKey). */
  id: string;
  source_id: string;
  path: string;
  /** The kind's version of the item (ETag, mtime and size, blob id, UID): unchanged means nothing to fetch. */
  version: string;
  sha256: string | null;
  document_id: string | null;
  error: string | null;
  seen_in: number;
  updated_at: number;
}

/** A project's label: each name once per project, any case (022). */
export interface LabelsTable {
  id: string;
  project_id: string;
  name: string;
  /** One of LABEL_COLORS (store/sql/labels.ts). */
  color: string;
  created_at: number;
  updated_at: number;
}

/** A label on a document (022). */
export interface DocumentLabelsTable {
  /** `<document_id>:<label_id>`. */
  id: string;
  document_id: string;
  label_id: string;
  created_at: number;
}

/** A document's metadata as filters read it (core/metadata-entries.ts), one row per key and per value (022). */
export interface DocumentMetadataTable {
  /** `<document_id>:<n>`. */
  id: string;
  document_id: string;
  key: string;
  /** The value's JSON text; null for the row that says the key exists. */
  value: string | null;
  number: number | null;
  moment: number | null;
}

/** A person's named search (022): `search` is its JSON (query, filters, mode, group); shared with `project_id`'s members. */
export interface SavedSearchesTable {
  id: string;
  user_id: string;
  project_id: string | null;
  name: string;
  search: string;
  created_at: number;
  updated_at: number;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  setup_tokens: SetupTokensTable;
  login_attempts: LoginAttemptsTable;
  api_keys: ApiKeysTable;
  projects: ProjectsTable;
  documents: DocumentsTable;
  jobs: JobsTable;
  job_turns: JobTurnsTable;
  settings: SettingsTable;
  oauth_clients: OAuthClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  project_members: ProjectMembersTable;
  invites: InvitesTable;
  sources: SourcesTable;
  source_items: SourceItemsTable;
  totp_secrets: TotpSecretsTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  audit_events: AuditEventsTable;
  identities: IdentitiesTable;
  notices: NoticesTable;
  mail_outbox: MailOutboxTable;
  password_resets: PasswordResetsTable;
  known_devices: KnownDevicesTable;
  labels: LabelsTable;
  document_labels: DocumentLabelsTable;
  document_metadata: DocumentMetadataTable;
  saved_searches: SavedSearchesTable;
}
