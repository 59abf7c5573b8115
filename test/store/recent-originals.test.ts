import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecentOriginals } from '../../src/store/objects/recent-originals.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('recent originals (a replica\'s own copies of what it received)', () => {
  let root: string;
  let n = 0;
  /** A received temp file, as the upload handler leaves it. */
  const received = (text: string) => {
    const bytes = Buffer.from(text);
    const path = join(root, `upload-${n++}.part`);
    writeFileSync(path, bytes);
    return { path, bytes, sha: sha(bytes) };
  };
  const kept = () => readdirSync(join(root, 'kept')).sort();
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'docsearch-recent-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('keeps a received file after the temp file is gone, and gives its bytes back', async () => {
    const recent = new RecentOriginals({ dir: join(root, 'kept') });
    await recent.init();
    const f = received('sea otters hold hands');
    expect(await recent.keep(f.path, f.sha)).toBe(true);
    rmSync(f.path); // the store's put consumes the temp file
    await recent.init(); // FileStore.init runs before every upload: only the first empties the folder
    expect(await recent.read(f.sha)).toEqual(f.bytes);
    expect(await recent.read(sha(Buffer.from('never received')))).toBeUndefined();
  });

  it('never answers with bytes that are not the original: a changed or missing copy is dropped', async () => {
    const recent = new RecentOriginals({ dir: join(root, 'kept') });
    await recent.init();
    const a = received('the original text');
    await recent.keep(a.path, a.sha);
    writeFileSync(join(root, 'kept', a.sha), 'tampered');
    expect(await recent.read(a.sha)).toBeUndefined();
    expect(kept()).toEqual([]);
    const b = received('another original');
    await recent.keep(b.path, b.sha);
    rmSync(join(root, 'kept', b.sha));
    expect(await recent.read(b.sha)).toBeUndefined();
  });

  it('holds at most maxBytes and maxAgeMs, oldest first, and starts empty', async () => {
    let now = 0;
    const recent = new RecentOriginals({ dir: join(root, 'kept'), maxBytes: 25, maxAgeMs: 1000, now: () => now });
    await recent.init();
    const files = ['0123456789', 'abcdefghij', 'ABCDEFGHIJ'].map(received);
    for (const f of files) await recent.keep(f.path, f.sha);
    expect(kept()).toEqual([files[1]!.sha, files[2]!.sha].sort());
    expect(await recent.keep(received('x'.repeat(26)).path, sha(Buffer.from('x'.repeat(26))))).toBe(false);
    now += 2000;
    const late = received('later');
    await recent.keep(late.path, late.sha);
    expect(kept()).toEqual([late.sha]);
    const again = new RecentOriginals({ dir: join(root, 'kept') });
    await again.init();
    expect(kept()).toEqual([]);
  });
});
