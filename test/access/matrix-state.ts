/**
 * The permission matrix's read-back: the library's whole relational state, read from the daemon's own database
 * (SQLite file or PostgreSQL), so that a refused request is seen to have changed nothing — names, members and roles,
 * documents and their trash, keys, sources, accounts, groups, invitations, settings, and any table added later —
 * and an allowed one to have made its change. Read straight from the store, not through the API, so no product
 * code between the request and the check can hide a change.
 *
 * What every request changes by design is left out (VOLATILE): the audit log (refusals are audited too; the audit
 * suites check it), sign-in throttling, a session's sliding expiry and flash, a credential's last use.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { join } from 'node:path';
import type { Daemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';

/** Tables left out entirely, or the columns of a table left out: what any request, allowed or refused, may change. */
const VOLATILE: Record<string, '*' | readonly string[]> = {
  audit_events: '*',
  // The mail sender's work, on its own schedule (the matrix's daemon names a mail server that is not there).
  mail_outbox: '*',
  login_attempts: '*',
  // The job queue's fairness rotation: which user was served last.
  job_turns: '*',
  // A session slides, carries the next page's flash, remembers where it was last seen and a WebAuthn challenge.
  sessions: ['expires_at', 'last_seen_at', 'once_sealed', 'client_ip', 'user_agent', 'challenge', 'challenge_until'],
  api_keys: ['last_used_at'],
  passkeys: ['last_used_at'],
  identities: ['last_sign_in_at'],
  oauth_tokens: ['used_at'],
};

/** A table's rows, each as JSON without its volatile columns, by its first column (its key). */
export type State = Map<string, Map<string, string>>;

export interface StateReader {
  snapshot(): Promise<State>;
  /** Waits until no job is queued or running and no source pass is asked for or running: nothing changes by itself. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

function keep(table: string, row: Record<string, unknown>): [string, string] | null {
  const volatile = VOLATILE[table];
  if (volatile === '*') return null;
  // A signed-out browser's session (a login page, a refusal's redirect) is not the library's state.
  if (table === 'sessions' && row.user_id === null && row.pending_user_id === null) return null;
  const kept = Object.fromEntries(Object.entries(row).filter(([column]) => !volatile?.includes(column)));
  return [String(Object.values(row)[0]), JSON.stringify(kept)];
}

function toState(tables: [string, Record<string, unknown>[]][]): State {
  const state: State = new Map();
  for (const [table, rows] of tables) {
    if (VOLATILE[table] === '*') continue;
    const kept = new Map<string, string>();
    for (const row of rows) {
      const entry = keep(table, row);
      if (entry) kept.set(entry[0], entry[1]);
    }
    state.set(table, kept);
  }
  return state;
}

/** Work due now: a job to run, a source pass running or due (a pass asked for makes the source due at once). */
const busySql = (now: number) => `SELECT (SELECT count(*) FROM jobs WHERE state = 'running' OR (state = 'pending' AND run_after <= ${now})) AS jobs,
  (SELECT count(*) FROM sources WHERE syncing_since IS NOT NULL OR (status = 'active' AND next_sync_at <= ${now})) AS passes`;

/** Opens the daemon's database read-only beside it. */
export async function stateReader(d: Daemon): Promise<StateReader> {
  let read: () => Promise<[string, Record<string, unknown>[]][]>;
  let busy: () => Promise<number>;
  let close: () => Promise<void>;
  if (d.databaseUrl) {
    const client = new pg.Client({ connectionString: d.databaseUrl });
    await client.connect();
    // bigint times as numbers, as the store reads them.
    client.setTypeParser(20, (v: string) => Number(v));
    const tables = (await client.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1")).rows
      .map((r) => r.name)
      .filter((t) => VOLATILE[t] !== '*' && !t.startsWith('kysely_'));
    // One round trip: every table as a JSON array, in one snapshot of the database.
    const sql = `SELECT ${tables.map((t) => `(SELECT coalesce(json_agg(t), '[]'::json) FROM "${t}" t) AS "${t}"`).join(', ')}`;
    read = async () => {
      const row = (await client.query(sql)).rows[0] as Record<string, Record<string, unknown>[]>;
      return tables.map((t) => [t, row[t]!]);
    };
    busy = async () => {
      const r = (await client.query(busySql(Date.now()))).rows[0] as { jobs: string; passes: string };
      return Number(r.jobs) + Number(r.passes);
    };
    close = () => client.end();
  } else {
    const db = new Database(join(d.dataDir, 'docsearch.db'), { readonly: true, fileMustExist: true });
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%' ORDER BY 1").all() as { name: string }[])
      .map((r) => r.name)
      .filter((t) => VOLATILE[t] !== '*');
    const statements = tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}"`)] as const);
    const all = db.transaction(() => statements.map(([t, st]) => [t, st.all() as Record<string, unknown>[]] as [string, Record<string, unknown>[]]));
    read = async () => all();
    busy = async () => {
      const r = db.prepare(busySql(Date.now())).get() as { jobs: number; passes: number };
      return r.jobs + r.passes;
    };
    close = async () => void db.close();
  }
  return {
    snapshot: async () => toState(await read()),
    settle: async () => void (await waitFor(async () => (await busy()) === 0, 120_000, 'no job queued or running and no source pass pending', { intervalMs: 20 })),
    close,
  };
}

const short = (v: string) => (v.length > 160 ? `${v.slice(0, 160)}…` : v);

/** What changed from `a` to `b`, a line per row: `documents[doc_…].filename: "note.txt" → "renamed.txt"`, `api_keys[key_…] removed`. */
export function changes(a: State, b: State): string[] {
  const out: string[] = [];
  for (const table of new Set([...a.keys(), ...b.keys()])) {
    const before = a.get(table) ?? new Map<string, string>();
    const after = b.get(table) ?? new Map<string, string>();
    for (const [key, row] of before) {
      const now = after.get(key);
      if (now === undefined) out.push(`${table}[${key}] removed`);
      else if (now !== row) {
        const x = JSON.parse(row) as Record<string, unknown>;
        const y = JSON.parse(now) as Record<string, unknown>;
        for (const column of new Set([...Object.keys(x), ...Object.keys(y)])) {
          if (JSON.stringify(x[column]) !== JSON.stringify(y[column])) out.push(`${table}[${key}].${column}: ${short(JSON.stringify(x[column]))} → ${short(JSON.stringify(y[column]))}`);
        }
      }
    }
    for (const [key, row] of after) if (!before.has(key)) out.push(`${table}[${key}] added: ${short(row)}`);
  }
  return out;
}

/** The rows of `table` as objects (for an allowed cell's effect). */
export function rows(state: State, table: string): Record<string, any>[] {
  return [...(state.get(table)?.values() ?? [])].map((r) => JSON.parse(r) as Record<string, any>);
}
