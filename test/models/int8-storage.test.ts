import { describe, expect, it } from 'vitest';
import { int8StorageFor } from '../../src/models/builtin/int8-storage.js';

describe('int8 weight storage', () => {
  it('is signed only where u8×s8 products do not saturate', () => {
    expect(int8StorageFor('x64', ['avx2', 'avx512f', 'avx512_vnni'])).toBe('signed');
    expect(int8StorageFor('x64', ['avx2', 'avx_vnni'])).toBe('signed');
    expect(int8StorageFor('arm64', undefined)).toBe('signed');
    // AVX2 or AVX-512 without VNNI: VPMADDUBSW adds products in saturating 16-bit lanes.
    expect(int8StorageFor('x64', ['avx2', 'avx512f', 'avx512bw'])).toBe('unsigned');
    expect(int8StorageFor('x64', undefined)).toBe('unsigned'); // features unknown (not Linux)
  });
});
