import { describe, expect, it } from 'vitest';
import { formatBytes, plural } from '../../src/web/format.js';

describe('what pages write for sizes and counts', () => {
  it('a size in binary units with their IEC names, the one formatter the CLI tables use too', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1.0 KiB');
    expect(formatBytes(10_239)).toBe('10 KiB');
    expect(formatBytes(10_240)).toBe('10 KiB');
    expect(formatBytes(1_048_500)).toBe('1.0 MiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
    expect(formatBytes(5000 * 1024 ** 4)).toBe('5000 TiB');
    expect(formatBytes(1_016_000)).toBe('992 KiB');
    expect(formatBytes(1536)).toBe('1.5 KiB');
  });

  it('a count agrees with its noun', () => {
    expect(plural(0, 'chunk')).toBe('0 chunks');
    expect(plural(1, 'chunk')).toBe('1 chunk');
    expect(plural(2, 'document')).toBe('2 documents');
    expect(plural(1204, 'passage')).toBe('1,204 passages');
    expect(plural(1, 'match', 'matches')).toBe('1 match');
    expect(plural(3, 'match', 'matches')).toBe('3 matches');
  });
});
