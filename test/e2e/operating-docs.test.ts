/**
 * What the operating docs state about the files around docsearch, held to what is there: the one systemd unit the
 * README and docs/scale-out.md show (the same text, which systemd-analyze accepts, with what an upgrade needs of
 * it), the one Node.js minimum (package.json's engines), the pack scripts' tarballs kept out of git, and the data
 * directory's layout in docs/configuration.md against what a daemon and a backup leave in one.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addUser, BIN, type Daemon, REPO, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { documentedDataDir } from '../helpers/documented-data-dir.js';
import { documentedUnits, readmeUnit, unitSetting } from '../helpers/documented-unit.js';
import { missingFile } from '../helpers/requirement.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const read = (file: string) => readFileSync(join(REPO, file), 'utf8');
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';

describe('the operating docs hold', () => {
  it('the README and scale-out.md show one unit, word for word', () => {
    const unit = readmeUnit();
    expect(documentedUnits('docs/scale-out.md')).toEqual([unit]);
    // The other docs do not show one of their own.
    for (const file of ['docs/operations.md', 'docs/configuration.md', 'docs/postgresql.md', 'docs/migrate.md']) expect(documentedUnits(file), file).toEqual([]);
  });

  it('the unit is what an upgrade and a first start need: the docsearch user (made as the README says), its state directory, no restart on exit 2 or 3', () => {
    const unit = readmeUnit();
    expect(unitSetting(unit, 'User')).toBe('docsearch');
    expect(read('README.md')).toContain('useradd --system --user-group --home-dir /var/lib/docsearch --shell /usr/sbin/nologin docsearch');
    expect(unitSetting(unit, 'StateDirectory')).toBe('docsearch/%i');
    expect(unitSetting(unit, 'ExecStart')).toContain('--data-dir /var/lib/docsearch/%i');
    expect(unitSetting(unit, 'RestartPreventExitStatus')!.split(/\s+/).sort()).toEqual(['2', '3']);
    expect(unitSetting(unit, 'EnvironmentFile')).toBe('-/etc/docsearch/env');
  });

  it.skipIf(missingFile(SYSTEMD_ANALYZE, 'apt-get install -y systemd') !== null)('systemd-analyze verifies the unit without a word (its program pointed at this checkout)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-unit-'));
    try {
      writeFileSync(join(dir, 'docsearch@.service'), readmeUnit().replace(/^ExecStart=\S+/m, `ExecStart=${BIN}`));
      const res = spawnSync(SYSTEMD_ANALYZE, ['verify', '--man=no', 'docsearch@7411.service'], { cwd: dir, encoding: 'utf8' });
      expect(res.status, res.stderr).toBe(0);
      expect(`${res.stdout}${res.stderr}`.trim()).toBe('');
    } finally {
      removeDir(dir);
    }
  });

  it('one Node.js minimum everywhere: package.json’s engines', () => {
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const minimum = /^>=(\d+\.\d+)$/.exec(engines)![1]!;
    const said = [read('README.md'), ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => read(`docs/${f}`))]
      .flatMap((text) => [...text.matchAll(/Node(?:\.js)? ≥ (\d+\.\d+)/g)].map((m) => m[1]));
    expect(said.length).toBeGreaterThan(0);
    expect(new Set(said)).toEqual(new Set([minimum]));
  });

  it('the pack scripts’ tarballs are kept out of git', () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    for (const tgz of [`docsearch-${version}.tgz`, `docsearch-cli-${version}.tgz`]) {
      expect(spawnSync('git', ['check-ignore', '-q', tgz], { cwd: REPO }).status, tgz).toBe(0);
    }
  });

  describe('the data directory holds what configuration.md lists', () => {
    let d: Daemon | undefined;
    afterAll(async () => {
      await d?.stop();
      if (d) removeDir(d.dataDir);
    });

    it('after a daemon served an upload and a backup ran beside it', async () => {
      d = await startDaemon();
      const user = await addUser(d);
      const up = await uploadFiles(d, user.apiKey, [{ name: 'owls.txt', bytes: Buffer.from('Barn owls swallow their prey whole.\n') }], { query: '?wait=true' });
      expect(up.status).toBe(200);
      const repo = mkdtempSync(join(tmpdir(), 'docsearch-layout-backup-'));
      try {
        const backup = await runCli(['backup', '--data-dir', d.dataDir, '--to', repo], { timeoutMs: 120_000 });
        expect(backup.code, backup.stderr).toBe(0);
      } finally {
        removeDir(repo);
      }
      // The test's own config home is not the library's.
      const present = readdirSync(d.dataDir).filter((e) => e !== 'config-home');
      const listed = documentedDataDir();
      for (const entry of ['docsearch.db', 'lancedb', 'files', 'daemon.lock', 'space-reserve', 'backup.lock', 'backup.key']) expect(present).toContain(entry);
      for (const entry of present) expect(listed, `${entry} is in the data dir but not in docs/configuration.md's layout`).toContainEqual(expect.objectContaining({ name: entry }));
    }, 240_000);
  });
});
