/**
 * Backup ids sort as the backups were taken, within one second too: restore takes the last id as the newest
 * (repository.ts listBackups), and two backups a few hundred milliseconds apart once sorted by their random
 * characters, so restore refused "the newest" for the older one's damage (a CI run of test/admin/restore-refusals).
 */
import { describe, expect, it } from 'vitest';
import { newBackupId } from '../../src/admin/backup/backup.js';
import { BACKUP_ID } from '../../src/admin/backup/manifest.js';

describe('backup ids', () => {
  it('sort in the order they were taken, down to the millisecond, in the format manifests are checked against', () => {
    const second = Date.parse('2026-11-28T08:35:23.000Z');
    const times = [0, 1, 2, 9, 10, 15, 16, 99, 100, 255, 256, 400, 511, 512, 700, 998, 999, 1000, 1001, 61_000].map((ms) => second + ms);
    const ids = times.map(newBackupId);
    for (const id of ids) expect(id).toMatch(BACKUP_ID);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]!.startsWith('20261128T083523Z-000')).toBe(true);
    expect(ids[16]!.startsWith('20261128T083523Z-3e7')).toBe(true);
  });

  it('differ for backups started in the same millisecond', () => {
    const at = Date.parse('2026-11-28T08:35:23.085Z');
    expect(new Set(Array.from({ length: 20 }, () => newBackupId(at))).size).toBeGreaterThan(15);
  });
});
