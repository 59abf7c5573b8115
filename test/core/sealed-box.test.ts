import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SealedBox, SealedBoxError } from '../../src/core/sealed-box.js';

describe('SealedBox: secrets sealed under the operator\'s key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-sealed-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const keyFile = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('opens what it sealed, for the same record only; the sealed text holds nothing of the secret', () => {
    const box = SealedBox.fromFile(keyFile('a', `${'0123456789abcdef'.repeat(4)}\n`));
    const sealed = box.seal('{"password":"hunter2hunter2"}', 'src_1');
    expect(sealed).not.toContain('hunter2');
    expect(sealed.startsWith(`v1.${box.keyId}.`)).toBe(true);
    expect(box.open(sealed, 'src_1')).toBe('{"password":"hunter2hunter2"}');
    // Two seals of one secret differ (a fresh IV each time).
    expect(box.seal('{"password":"hunter2hunter2"}', 'src_1')).not.toBe(sealed);
    expect(() => box.open(sealed, 'src_2')).toThrow(/damaged, or belongs to another record/);
    const tampered = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}A`;
    expect(() => box.open(tampered, 'src_1')).toThrow(SealedBoxError);
  });

  it('says when a value was sealed under another key, and refuses a short or missing key file', () => {
    const a = SealedBox.fromFile(keyFile('k1', 'x'.repeat(40)));
    const b = SealedBox.fromFile(keyFile('k2', 'y'.repeat(40)));
    expect(() => b.open(a.seal('secret', 'src_1'), 'src_1')).toThrow(/sealed under another key \(.{8}; this server's is .{8}\): the secrets key file changed/);
    expect(() => SealedBox.fromFile(keyFile('short', 'too short'))).toThrow(/at least 32 bytes/);
    expect(() => SealedBox.fromFile(join(dir, 'missing'))).toThrow(/cannot read .*missing: ENOENT/);
  });
});
