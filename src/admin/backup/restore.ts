/**
 * A backup brought back into an empty place (restore-target.ts): every file copied out of the repository and
 * placed only when its bytes hash to what the manifest says, then each index table checked to be at the
 * backed-up version with its rows, and the database last (until it is in place the target holds no library).
 */
import { join } from 'node:path';
import { isDiskFull } from '../../core/disk-full.js';
import { CliError } from '../../terminal/errors.js';
import { placeSecretsKey, SECRETS_KEY_FILE } from '../../server/secrets-key.js';
import type { Progress } from '../migrate/progress.js';
import { latestVersions } from '../../store/lancedb/version-pins.js';
import { LocalObjectStore, NotRegularFile } from '../../store/objects/local.js';
import type { ObjectStore } from '../../store/objects/object-store.js';
import { eachLimited } from '../each-limited.js';
import { ChecksumMismatch, copyObject } from './copy-object.js';
import type { BackedUpFile, BackupManifest } from './manifest.js';
import type { Repository } from './repository.js';
import type { RestoreTarget } from './restore-target.js';

const FILES_AT_ONCE = 4;

export interface RestoreSummary {
  id: string;
  taken_at: string;
  to: string;
  files: number;
  bytes: number;
  tables: { name: string; version: number; rows: number }[];
  verified: true;
  /** The backup key its manifest's seal was checked with; null when it was taken on trust (--trust-repository). */
  key_id: string | null;
  /** The id of the secrets key put in place from the backup (server/secrets-key.ts), or null: none was. */
  secrets_key_id: string | null;
  seconds: number;
}

const AGAIN = 'restore another backup (docsearch restore --list); the target is left incomplete: empty it first';
/** A disk that filled up meanwhile (restore checks the room first): the same restore goes on once there is room. */
const FULL = 'the target is left incomplete, and no daemon serves it: free space, then run the same restore again (it goes on where it stopped)';

export async function restoreInto(opts: {
  repo: Repository;
  manifest: BackupManifest;
  keyId: string | null;
  /** The library's secrets key, unwrapped from the manifest: placed where the restored daemon looks for it. */
  secretsKey?: Buffer | null;
  target: RestoreTarget;
  progress: Progress;
  now?: () => number;
}): Promise<RestoreSummary> {
  const now = opts.now ?? Date.now;
  const started = now();
  const { repo, manifest: m, target, progress } = opts;
  const place = async (f: BackedUpFile, to: ObjectStore, path: string) => {
    try {
      const got = await copyObject(repo.store, f.key, to, path, { tmpDir: target.tmpDir, expect: f });
      if (!got) throw new CliError(`backup ${m.id} is damaged: ${f.key} is missing from ${repo.store.location}`, 1, AGAIN);
    } catch (err) {
      if (err instanceof ChecksumMismatch) throw new CliError(`backup ${m.id} is damaged: checksum mismatch: ${err.message}`, 1, AGAIN);
      if (err instanceof NotRegularFile) throw new CliError(`backup ${m.id} is damaged: ${err.message}`, 1, AGAIN);
      if (isDiskFull(err)) throw new CliError(`the disk is full: ${(err as Error).message}`, 1, FULL);
      throw err;
    }
  };
  const step = progress.step('files', m.files.length, 'files');
  await eachLimited(m.files, FILES_AT_ONCE, async (f) => {
    await place(f, target.root, f.path);
    step.add(1, f.size);
  });
  step.end();
  for (const sha of m.missing_originals) progress.line(`warning: original ${sha} was missing in the library when backup ${m.id} was taken: its documents are restored without it`);
  const pending = 'database.restoring.sqlite';
  await place(m.database, new LocalObjectStore(target.tmpDir), pending);

  const vectors = await target.openVectors();
  try {
    const got = new Map((await latestVersions(vectors)).map((t) => [t.name, t]));
    for (const t of m.tables) {
      const g = got.get(t.name);
      if (!g || g.version !== t.version || g.rows !== t.rows) {
        throw new CliError(`the restored index table ${t.name} is ${g ? `at version ${g.version} with ${g.rows} rows` : 'missing'}, the backup has version ${t.version} with ${t.rows} rows`, 1, AGAIN);
      }
    }
  } finally {
    await vectors.close();
  }
  if (opts.secretsKey) {
    // Before the database: once that is in place a daemon may start, and it would make a key of its own.
    const there = await placeSecretsKey(target.root, opts.secretsKey);
    if (!there.equals(opts.secretsKey)) throw new CliError(`${target.label} already holds another ${SECRETS_KEY_FILE}`, 1, AGAIN);
    progress.line(`the library's secrets key (id ${m.secrets_key!.id}) is in place as ${SECRETS_KEY_FILE} in ${target.label}: its second factors and source credentials open`);
  }
  await target.placeDatabase(join(target.tmpDir, pending));
  const manifest = opts.keyId ? `its manifest's seal checked with backup key ${opts.keyId}` : 'its manifest taken on trust (--trust-repository)';
  progress.line(`restored backup ${m.id} (the library as of ${m.taken_at}) into ${target.label}: every file verified against the manifest, ${manifest}`);
  return {
    id: m.id,
    taken_at: m.taken_at,
    to: target.label,
    files: m.files.length + 1,
    bytes: m.files.reduce((n, f) => n + f.size, m.database.size),
    tables: m.tables,
    verified: true,
    key_id: opts.keyId,
    secrets_key_id: opts.secretsKey ? m.secrets_key!.id : null,
    seconds: Math.round((now() - started) / 100) / 10,
  };
}
