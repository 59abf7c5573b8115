import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../src/store/sql/api-keys.js';
import { DocumentStore } from '../../src/store/sql/documents.js';
import { JobStore } from '../../src/store/sql/jobs.js';
import { openOAuthStores } from '../../src/store/sql/oauth-transaction.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { openPostgres } from '../../src/store/sql/postgres.js';
import { SessionStore } from '../../src/store/sql/sessions.js';
import { SetupTokenStore } from '../../src/store/sql/setup-tokens.js';
import { openSqlite } from '../../src/store/sql/sqlite.js';
import { UserStore } from '../../src/store/sql/users.js';
import { REPO, removeDir } from '../helpers/daemon.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { newPostgresDatabase } from '../helpers/store-dialects.js';

const dir = mkdtempSync(join(tmpdir(), 'docsearch-migrations-'));
afterAll(() => removeDir(dir));

/** Every schema object of a SQLite file, its statement with whitespace folded, by name. */
function sqliteSchema(path: string): Map<string, string> {
  const raw = new BetterSqlite3(path, { readonly: true });
  const rows = raw.prepare("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'").all() as { name: string; sql: string }[];
  raw.close();
  return new Map(rows.map((r) => [r.name, r.sql.replace(/\s+/g, ' ')]));
}

/** A SQLite file holding the released version's database (test/fixtures/sqlite/make-release-db.ts). */
function releasedDatabase(name: string): string {
  const path = join(dir, name);
  const raw = new BetterSqlite3(path);
  raw.exec(readFileSync(join(REPO, 'test/fixtures/sqlite/release-0.1.0.sql'), 'utf8'));
  raw.close();
  return path;
}

describe('migrations on SQLite', () => {
  it('open a database made by the released version and migrate it on, keeping every row readable', async () => {
    const released = releasedDatabase('released.db');
    const now = () => Date.UTC(2025, 5, 2);
    const handle = await openSqlite(released);
    try {
      const { db } = handle;
      const applied = await db.selectFrom('kysely_migration' as never).select('name' as never).execute();
      expect(applied.map((r) => (r as { name: string }).name)).toEqual(['001-accounts-projects', '002-documents-jobs', '003-oauth', '004-document-paths', '005-job-released', '006-job-turns', '007-job-origin', '008-document-list-indexes', '009-oauth-self-registration', '010-session-once', '011-document-attachments', '012-sharing', '013-oauth-loopback-paths', '014-sources', '015-two-factor-audit', '016-trash', '017-identities', '018-api-key-expiry', '019-team-operations', '020-mail', '021-languages', '022-labels-filters', '023-session-confirmed', '025-quotas', '028-ocr-languages', '029-project-counts', '030-identity-per-provider']);
      const user = (await new UserStore(db, now).findByEmail('release.user@example.com'))!;
      expect(user.email).toBe('Release.User@Example.com');
      const projects = await new ProjectStore(db, now).listAmong((await new ProjectStore(db, now).ownedBy(user.id)).map((p) => p.id), 10);
      expect(projects.projects.map((p) => [p.name, p.isDefault, p.documentCount, p.chunkCount, p.sizeBytes])).toEqual([
        ['default', true, 1, 0, 99],
        ['Notes', false, 1, 3, 1234],
      ]);
      const jobs = new JobStore(db, now);
      const documents = new DocumentStore(db, jobs, now);
      const ready = (await documents.list(projects.projects.map((p) => p.id), { path: 'dir/ready.txt' }, 10)).documents[0]!;
      expect(ready).toMatchObject({ status: 'ready', chunkCount: 3, warnings: ['a warning'], metadata: { k: 'v' }, embedderId: 'builtin:all-MiniLM-L6-v2', attachedTo: null });
      // The queued document's job is claimed and finished by today's queue.
      const job = (await jobs.claim('worker', 60_000))!;
      expect(job).toMatchObject({ kind: 'ingest', attempts: 1, released: false });
      expect(await documents.markReady(job.documentId, job, { chunkCount: 1, pages: 1, warnings: [], embedderId: 'e' })).toBe(true);
      expect((await new ApiKeyStore(db, now).findActiveByHash('c'.repeat(64)))?.scopes).toEqual(['read:documents']);
      // 015: a session signed in before second factors existed says nothing of how; it owes no second step.
      expect(await new SessionStore(db, now).find('d'.repeat(64))).toMatchObject({ userId: user.id, signedInWith: null, pendingUserId: null });
      expect(await new UserStore(db, now).passkeySignIn(user.id)).toBe(false);
      expect(await new SetupTokenStore(db, now).isValid('e'.repeat(64))).toBe(true);
      const oauth = openOAuthStores(db, now);
      // 009: codes and tokens issued before resource indicators are the REST API's; clients keep who registered them.
      expect(await oauth.codes.find('1'.repeat(64))).toMatchObject({ grantId: 'grt_release', resource: null });
      expect(await oauth.tokens.find('2'.repeat(64))).toMatchObject({ kind: 'refresh', grantId: 'grt_release', grantRevokedAt: null, resource: null });
      // 013: the CLI's client names the loopback redirect URIs it uses; only their port varies.
      expect(await oauth.clients.find('docsearch-cli')).toMatchObject({
        isPublic: true,
        loopbackAnyPort: true,
        registration: 'operator',
        clientUri: null,
        redirectUris: ['http://127.0.0.1/callback', 'http://[::1]/callback'],
      });
      expect(await oauth.clients.find('cli_release')).toMatchObject({ registration: 'user' });
    } finally {
      await handle.close();
    }
  });

  it('make the very schema the released migrations made, and then what 006–028 change (001–005 learned PostgreSQL without changing it)', async () => {
    const fresh = join(dir, 'fresh.db');
    await (await openSqlite(fresh)).close();
    const before = sqliteSchema(releasedDatabase('pristine.db'));
    const now = sqliteSchema(fresh);
    // 007 added a column to jobs (SQLite appends it to the table's statement); 008 replaced one index; 009 added
    // columns to the OAuth tables; 010 one to sessions; 011 one to documents; 012 three to users, one to api_keys,
    // four tables, and moved 008's list indexes from the uploader to the project; 013 two OAuth indexes; 014 two columns
    // to documents, and the sources' tables; 015 a column to users, seven to sessions, four tables (second factors,
    // passkeys, the audit log); 016 two columns to documents and the trash's index; 017 the identities table; 018 a column to
    // api_keys; 019 columns to users and sessions, an index on sessions, the notices table; 020 the mail outbox, password
    // resets and known devices, two columns to invites, one to users; 021 two columns to documents, one to projects and
    // one to sources (languages); 022 a column to sources, the labels', documents' metadata and saved searches' tables;
    // 023 one to sessions (sudo mode's last proof); 025 one to users and one to
    // projects (quotas); 028 one to documents and one to projects (OCR languages); 029 an index of the documents outside
    // the trash (a project's counts); 030 makes identities_user unique (one link per account and provider).
    const append = (columns: string) => (statement: string) => statement.replace(/\)$/, `, ${columns})`);
    const added: Record<string, (statement: string) => string> = {
      api_keys: append('"project_ids" text, "expires_at" integer'),
      documents: append('"attached_to" text, "source_id" text, "source_path" text, "trashed_at" integer, "trashed_by" text, "language" text, "language_setting" text, "ocr_languages" text'),
      projects: append('"language" text, "quota_bytes" integer, "ocr_languages" text'),
      jobs: append('"origin" text'),
      oauth_clients: append(`"registration" text default 'operator' not null, "client_uri" text`),
      oauth_codes: append('"resource" text'),
      oauth_grants: append('"resource" text'),
      oauth_tokens: append('"resource" text'),
      sessions: append(
        '"once_sealed" text, "signed_in_with" text, "client_ip" text, "user_agent" text, "pending_user_id" text, "pending_until" integer, "challenge" text, "challenge_until" integer, "provider" text, "provider_subject" text, "provider_sid" text, "provider_refresh" text, "provider_checked_at" integer, "confirmed_at" integer',
      ),
      users: append('"is_admin" integer default 0 not null, "disabled_at" integer, "deleted_at" integer, "passkey_sign_in" integer default 0 not null, "admin_managed_by" text, "link_offered_at" integer, "last_sign_in_at" integer, "quota_bytes" integer'),
    };
    const dropped = new Set(['documents_user_status']);
    for (const [name, statement] of before) expect(now.get(name), name).toBe(dropped.has(name) ? undefined : (added[name]?.(statement) ?? statement));
    expect([...now.keys()].filter((name) => !before.has(name)).sort()).toEqual([
      'audit_events',
      'audit_events_actor',
      'audit_events_at',
      'audit_events_target',
      'audit_events_type',
      'document_labels',
      'document_labels_document',
      'document_labels_label',
      'document_metadata',
      'document_metadata_document',
      'document_metadata_moment',
      'document_metadata_number',
      'document_metadata_value',
      'documents_attached_to',
      'documents_live_counts',
      'documents_project_counts',
      'documents_project_name',
      'documents_project_order',
      'documents_project_size',
      'documents_project_status_order',
      'documents_source',
      'documents_trash',
      'documents_user_order',
      'group_members',
      'group_members_user',
      'groups',
      'groups_name',
      'identities',
      'identities_provider_subject',
      'identities_user',
      'invites',
      'job_turns',
      'jobs_origin_claim',
      'jobs_user_claim',
      'known_devices',
      'known_devices_user',
      'labels',
      'labels_project_name',
      'mail_outbox',
      'mail_outbox_due',
      'notices',
      'notices_user',
      'oauth_clients_registration',
      'oauth_codes_client',
      'oauth_grants_client',
      'passkeys',
      'passkeys_credential',
      'passkeys_user',
      'password_resets',
      'password_resets_user',
      'project_members',
      'project_members_member',
      'recovery_codes',
      'recovery_codes_user',
      'saved_searches',
      'saved_searches_project',
      'saved_searches_user_name',
      'sessions_provider_subject',
      'sessions_user',
      'source_items',
      'source_items_document',
      'sources',
      'sources_due',
      'sources_project',
      'totp_secrets',
    ]);
  });
});

describe.skipIf(postgresUnavailable() !== null)('migrations on PostgreSQL', () => {
  it('run once when several processes open one empty database at the same moment', async () => {
    const url = await newPostgresDatabase();
    const script = join(REPO, 'test/store/child/open-database.ts');
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => {
        const child = spawn(process.execPath, ['--import', 'tsx', script, url], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        return new Promise<{ code: number | null; out: string }>((resolve) => child.once('exit', (code) => resolve({ code, out })));
      }),
    );
    for (const run of runs) expect(run, run.out).toMatchObject({ code: 0, out: expect.stringContaining('migrated') });
    const handle = await openPostgres(url);
    try {
      const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(handle.db);
      expect(rows.rows.map((r) => r.name)).toEqual(['001-accounts-projects', '002-documents-jobs', '003-oauth', '004-document-paths', '005-job-released', '006-job-turns', '007-job-origin', '008-document-list-indexes', '009-oauth-self-registration', '010-session-once', '011-document-attachments', '012-sharing', '013-oauth-loopback-paths', '014-sources', '015-two-factor-audit', '016-trash', '017-identities', '018-api-key-expiry', '019-team-operations', '020-mail', '021-languages', '022-labels-filters', '023-session-confirmed', '025-quotas', '028-ocr-languages', '029-project-counts', '030-identity-per-provider']);
      // The CLI's client is seeded by 003 once, not once per process.
      const clients = await handle.db.selectFrom('oauth_clients').select('id').execute();
      expect(clients).toEqual([{ id: 'docsearch-cli' }]);
    } finally {
      await handle.close();
    }
  }, 120_000);
});
