import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { isDiskFull } from '../core/disk-full.js';

const LOCK_FILE = 'daemon.lock';
const PID_FILE = 'daemon.pid';
/** The running daemon's public URL, for operator commands that print links (`users invite`): read only while the lock is held. */
const URL_FILE = 'daemon.url';

function pidOfHolder(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * One daemon per data directory: LanceDB must have a single writer. (In shared mode, where replicas share the
 * database, each replica has a data directory of its own for local things, and the lock keeps it its own: it
 * no longer means "the only daemon of this library".) The lock is an OS lock, not a pid
 * check: SQLite's exclusive locking mode holds an fcntl write lock on `daemon.lock` for as long as this
 * connection is open, and the kernel drops it when the process dies (kill -9 included), so a stale file
 * never blocks a start and a live holder always does. better-sqlite3 is already a dependency; Node has
 * no flock. `daemon.pid` only names the holder in the refusal message.
 */
export function lockDataDir(dataDir: string): () => void {
  const release = lockFile(join(dataDir, LOCK_FILE));
  if (!release) {
    const pid = pidOfHolder(dataDir);
    throw new Error(`another docsearch daemon${pid ? ` (pid ${pid})` : ''} is using ${dataDir}; stop it or pick another --data-dir`);
  }
  try {
    writeFileSync(join(dataDir, PID_FILE), String(process.pid), { mode: 0o600 });
  } catch (err) {
    // A full disk must not keep the daemon from starting (it reports degraded and recovers): the OS lock is
    // the lock; the pid file only names the holder.
    if (!isDiskFull(err)) throw err;
  }
  return () => {
    // The pid and URL files go first: once the lock is released they may already belong to the next daemon.
    rmSync(join(dataDir, PID_FILE), { force: true });
    rmSync(join(dataDir, URL_FILE), { force: true });
    release();
  };
}

/** The OS lock lockDataDir takes, on any file: its release, or null while another process holds it. */
export function lockFile(path: string): (() => void) | null {
  const db = new BetterSqlite3(path, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE'); // never committed: the lock lasts until close
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    return null;
  }
  return () => db.close();
}

/** Records the URL the daemon holding the lock is reached at (its public URL), for operator commands. */
export function recordDaemonUrl(dataDir: string, url: string): void {
  try {
    writeFileSync(join(dataDir, URL_FILE), `${url}\n`, { mode: 0o600 });
  } catch (err) {
    if (!isDiskFull(err)) throw err;
  }
}

/**
 * The public URL of the daemon running on this data directory, or null when none runs (no URL recorded, or the
 * lock is free: a daemon that died left its file behind). Takes the lock for an instant to find out; makes no file.
 */
export function runningDaemonUrl(dataDir: string): string | null {
  let url: string;
  try {
    url = readFileSync(join(dataDir, URL_FILE), 'utf8').trim();
  } catch {
    return null;
  }
  if (!existsSync(join(dataDir, LOCK_FILE))) return null;
  const release = lockFile(join(dataDir, LOCK_FILE));
  if (release) {
    release();
    return null;
  }
  return url || null;
}
