/**
 * A backup brought back into an empty place: every file copied out of the repository and placed only when its
 * bytes hash to what the manifest says, the database last (a data directory without it holds no library yet),
 * then each index table checked to be at the backed-up version with its rows. The data-dir lock keeps a daemon
 * out meanwhile.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError } from '../../terminal/errors.js';
import type { Progress } from '../migrate/progress.js';
import { lockDataDir } from '../../server/data-dir-lock.js';
import { VectorStore } from '../../store/lancedb/connection.js';
import { latestVersions } from '../../store/lancedb/version-pins.js';
import { LocalObjectStore } from '../../store/objects/local.js';
import { sqlitePath } from '../../store/sql/database.js';
import { ChecksumMismatch, copyObject, eachLimited } from './copy-object.js';
import type { BackupManifest } from './manifest.js';
import type { Repository } from './repository.js';

const FILES_AT_ONCE = 4;

export interface RestoreSummary {
  id: string;
  taken_at: string;
  to: string;
  files: number;
  bytes: number;
  tables: { name: string; version: number; rows: number }[];
  verified: true;
  seconds: number;
}

export async function restoreInto(opts: { repo: Repository; manifest: BackupManifest; dataDir: string; progress: Progress; now?: () => number }): Promise<RestoreSummary> {
  const now = opts.now ?? Date.now;
  const started = now();
  const { repo, manifest: m, dataDir, progress } = opts;
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new CliError(`${dataDir} is not empty`, 1, 'restore into a new or empty directory; nothing was changed');
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const release = lockDataDir(dataDir);
  try {
    const root = new LocalObjectStore(dataDir);
    const tmpDir = join(dataDir, 'files', 'tmp');
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    const place = async (f: { key: string; size: number; sha256: string }, path: string) => {
      try {
        const got = await copyObject(repo.store, f.key, root, path, { tmpDir, expect: f });
        if (!got) throw new CliError(`backup ${m.id} is damaged: ${f.key} is missing from ${repo.store.location}`, 1, 'restore another backup (docsearch restore --list); the target is left incomplete: empty it first');
      } catch (err) {
        if (err instanceof ChecksumMismatch) throw new CliError(`backup ${m.id} is damaged: checksum mismatch: ${err.message}`, 1, 'restore another backup (docsearch restore --list); the target is left incomplete: empty it first');
        throw err;
      }
    };
    const step = progress.step('files', m.files.length, 'files');
    await eachLimited(m.files, FILES_AT_ONCE, async (f) => {
      await place(f, f.path);
      step.add(1, f.size);
    });
    step.end();
    const pending = 'docsearch.db.restoring';
    await place(m.database, pending);

    const vectors = await VectorStore.open(join(dataDir, 'lancedb'));
    try {
      const got = new Map((await latestVersions(vectors)).map((t) => [t.name, t]));
      for (const t of m.tables) {
        const g = got.get(t.name);
        if (!g || g.version !== t.version || g.rows !== t.rows) {
          throw new CliError(`the restored index table ${t.name} is ${g ? `at version ${g.version} with ${g.rows} rows` : 'missing'}, the backup has version ${t.version} with ${t.rows} rows`, 1, 'the target is left incomplete: empty it first');
        }
      }
    } finally {
      await vectors.close();
    }
    await rename(join(dataDir, pending), sqlitePath(dataDir));
    progress.line(`restored backup ${m.id} (the library as of ${m.taken_at}) into ${dataDir}: every file verified`);
    return {
      id: m.id,
      taken_at: m.taken_at,
      to: dataDir,
      files: m.files.length + 1,
      bytes: m.files.reduce((n, f) => n + f.size, m.database.size),
      tables: m.tables,
      verified: true,
      seconds: Math.round((now() - started) / 100) / 10,
    };
  } finally {
    release();
  }
}
