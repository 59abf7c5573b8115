/**
 * `docsearch restore --from` an address that holds no backup — an empty s3:// prefix, a prefix holding something else
 * (a library's storage), a bucket that does not exist, an empty or missing directory — says so, naming the address,
 * and exits 1 (2 for a directory that is not there: a usage error), with `--list` (it does not list nothing and succeed) and when restoring; nothing is made.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const HINT = 'hint: check --from: it is the directory or s3://bucket/prefix that `docsearch backup --to` wrote';

const dirs = tempDirs('docsearch-restore-missing-backup');
afterAll(() => dirs.removeAll());

/** Every way of reading the address: each is refused alike, and the target is not made. */
async function expectNoBackup(from: string, said: string, env: Record<string, string> = {}, code = 1): Promise<void> {
  const target = join(dirs.make('target'), 'restored');
  for (const args of [['--list'], ['--list', '--json'], ['--to', target]]) {
    const res = await runCli(['restore', '--from', from, ...args], { env });
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(code);
    expect(res.stderr.split('\n')[0], args.join(' ')).toBe(`error: ${said}`);
    expect(res.stderr).toContain(HINT);
    expect(res.stdout, args.join(' ')).toBe('');
    expect(existsSync(target)).toBe(false);
  }
}

describe('restore --from a directory that holds no backup', () => {
  it('an empty directory, and one that does not exist', { timeout: 60_000 }, async () => {
    const empty = dirs.make('empty');
    await expectNoBackup(empty, `no backup found at ${empty}`);
    const missing = join(empty, 'bakcups');
    // A directory that is not there is a typo in --from: a usage error (exit 2).
    await expectNoBackup(missing, `--from: there is no directory ${missing}`, {}, 2);
    expect(existsSync(missing)).toBe(false);
  });

  it('a directory holding files but no backups/ (a data directory given by mistake)', { timeout: 60_000 }, async () => {
    const other = dirs.make('other');
    mkdirSync(join(other, 'files'));
    await expectNoBackup(other, `no backup found at ${other}`);
  });
});

const SKIP = rgwUnavailable();

describe.skipIf(SKIP !== null)(`restore --from an s3:// address that holds no backup${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let rgw: Rgw;
  beforeAll(async () => {
    rgw = await startRgw();
  }, 180_000);
  afterAll(async () => {
    await rgw?.stop();
  });

  it('an empty prefix, a prefix holding a library but no backup, and a bucket that does not exist', { timeout: 120_000 }, async () => {
    await expectNoBackup(`s3://${rgw.bucket}/nothing-here`, `no backup found at s3://${rgw.bucket}/nothing-here`, rgw.env());
    await rgw.client().send(new PutObjectCommand({ Bucket: rgw.bucket, Key: 'library/files/ab/abcdef', Body: 'an original\n' }));
    await expectNoBackup(`s3://${rgw.bucket}/library`, `no backup found at s3://${rgw.bucket}/library`, rgw.env());
    await expectNoBackup(`s3://${rgw.bucket}`, `no backup found at s3://${rgw.bucket}`, rgw.env());
    await expectNoBackup('s3://no-such-bucket/backups', 'no backup found at s3://no-such-bucket/backups: there is no such bucket', rgw.env());
  });
});
