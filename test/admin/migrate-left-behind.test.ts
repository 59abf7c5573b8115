/**
 * What `docsearch migrate` leaves behind, as docs/migrate.md says ("What moves"): "finished jobs, and sessions, codes,
 * tokens and password reset links that had expired when the migration started"; everything else of those tables
 * moves — the live ones, and pending, running and failed jobs. The rows are written straight into the source's
 * SQLite file (a library made by `users add --init`), each pair one expired or finished and one not, and the
 * target's file is read back row by row.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const DAY = 86_400_000;

describe('docsearch migrate leaves finished jobs and expired credentials behind, and moves the rest', () => {
  const dirs = tempDirs('docsearch-migrate-left-behind');
  let source: string;

  beforeAll(async () => {
    source = join(dirs.make('source'), 'data');
    const made = await runCli(['users', 'add', 'ann@example.com', '--data-dir', source, '--init'], { input: 'a long enough password\n' });
    expect(made.code, made.stderr).toBe(0);
    const bytes = Buffer.from('an original the jobs belong to\n');
    const sha = createHash('sha256').update(bytes).digest('hex');
    mkdirSync(join(source, 'files', sha.slice(0, 2)), { recursive: true });
    writeFileSync(join(source, 'files', sha.slice(0, 2), sha), bytes);

    const now = Date.now();
    const [expired, live] = [now - 60_000, now + DAY];
    const db = new Database(join(source, 'docsearch.db'));
    try {
      const user = (db.prepare('SELECT id FROM users').get() as { id: string }).id;
      const project = (db.prepare('SELECT id FROM projects').get() as { id: string }).id;
      const client = (db.prepare('SELECT id FROM oauth_clients LIMIT 1').get() as { id: string }).id;
      db.prepare("INSERT INTO documents (id, user_id, project_id, filename, content_type, size_bytes, sha256, status, created_at, updated_at) VALUES ('doc_left', ?, ?, 'note.txt', 'text/plain', ?, ?, 'failed', ?, ?)").run(user, project, bytes.length, sha, now, now);
      const job = db.prepare("INSERT INTO jobs (document_id, user_id, kind, state, run_after, created_at, updated_at) VALUES ('doc_left', ?, 'ingest', ?, ?, ?, ?)");
      for (const state of ['done', 'failed', 'pending']) job.run(user, state, now, now, now);
      const session = db.prepare('INSERT INTO sessions (id_hash, user_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)');
      session.run('session-expired', user, now - DAY, expired, now - DAY);
      session.run('session-live', user, now, live, now);
      const reset = db.prepare('INSERT INTO password_resets (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)');
      reset.run('reset-expired', user, now - DAY, expired);
      reset.run('reset-live', user, now, live);
      db.prepare("INSERT INTO oauth_grants (id, user_id, client_id, scopes, created_at) VALUES ('grant_left', ?, ?, 'read:documents', ?)").run(user, client, now);
      const code = db.prepare("INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, scopes, created_at, expires_at) VALUES (?, ?, ?, 'http://127.0.0.1/cb', 'read:documents', ?, ?)");
      code.run('code-expired', client, user, now - DAY, expired);
      code.run('code-live', client, user, now, live);
      const token = db.prepare("INSERT INTO oauth_tokens (token_hash, kind, grant_id, client_id, user_id, scopes, created_at, expires_at) VALUES (?, 'refresh', 'grant_left', ?, ?, 'read:documents', ?, ?)");
      token.run('token-expired', client, user, now - DAY, expired);
      token.run('token-live', client, user, now, live);
    } finally {
      db.close();
    }
  }, 120_000);

  it('into a new data directory: the expired and the finished stay, the rest is copied and verified', async () => {
    const target = join(dirs.make('target'), 'data');
    const moved = await runCli(['migrate', '--from', source, '--to', target, '--json'], { timeoutMs: 240_000 });
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({ verification: { ok: true, differences: [] } });
    const db = new Database(join(target, 'docsearch.db'), { readonly: true });
    try {
      const column = (sql: string) => (db.prepare(sql).pluck().all() as string[]).sort();
      expect(column('SELECT state FROM jobs')).toEqual(['failed', 'pending']);
      expect(column('SELECT id_hash FROM sessions')).toEqual(['session-live']);
      expect(column('SELECT token_hash FROM password_resets')).toEqual(['reset-live']);
      expect(column('SELECT code_hash FROM oauth_codes')).toEqual(['code-live']);
      expect(column('SELECT token_hash FROM oauth_tokens')).toEqual(['token-live']);
      expect(column('SELECT id FROM oauth_grants')).toEqual(['grant_left']);
      expect(column('SELECT id FROM documents')).toEqual(['doc_left']);
    } finally {
      db.close();
    }
    // The source is not changed by it.
    const src = new Database(join(source, 'docsearch.db'), { readonly: true });
    try {
      expect(src.prepare('SELECT count(*) FROM sessions').pluck().get()).toBe(2);
      expect(src.prepare('SELECT count(*) FROM jobs').pluck().get()).toBe(3);
    } finally {
      src.close();
    }
  });
});
