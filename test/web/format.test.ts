import { describe, expect, it } from 'vitest';
import { humanBytes } from '../../src/cli/output/time.js';
import { formatBytes, plural } from '../../src/web/format.js';

describe('what pages write for sizes and counts', () => {
  it('a size in the same binary units, with the same IEC names, as the CLI writes it', () => {
    for (const n of [0, 1, 1023, 1024, 1536, 10_239, 10_240, 1_016_000, 1_048_576, 5 * 1_048_576 + 1, 3 * 1024 ** 3, 2 * 1024 ** 4, 5000 * 1024 ** 4]) {
      expect(formatBytes(n), String(n)).toBe(humanBytes(n));
    }
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
